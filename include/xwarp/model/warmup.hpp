// A deploy-time warm-up: every module identity a measured run built, as the Python file that
// builds it again before the program runs (analysis/warmup_plan.hpp plans it from a report,
// render/warmup_script.hpp writes the file), and, with verify, the program measured on the
// cache the warm-up filled (warmup/warmup_job.hpp).
#ifndef XWARP_MODEL_WARMUP_HPP
#define XWARP_MODEL_WARMUP_HPP

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xwarp/model/results.hpp"

namespace xwarp
{
    // A generic instance the warm-up registers before its target loads.
    struct warmup_overload
    {
        std::string kernel;     // the generic kernel's qualname in its Python module; "" when a factory made it
        std::string module;     // that Python module when it is not the target's ("" the target's)
        std::string key;        // Warp's key of the kernel (a factory's kernel is found by it)
        std::string signature;  // as Warp prints it ("a: wp.array[wp.float32], s: float32")
        // one type per argument, as data the file turns into the type: {"type": "float32"},
        // {"array": "array", "dtype": {...}, "ndim": 1}, {"shape": [5], "scalar": {...}},
        // {"struct": "module:qualname"} (a @wp.struct of the kernel's own package)
        nlohmann::json types = nlohmann::json::array();
    };

    // One identity (module, hash, device, block_dim) of the run's first good cold pass.
    struct warmup_target
    {
        std::string module;  // Warp's module name
        std::string hash;    // full hex
        std::string device;
        std::optional<int> block_dim;
        double build_ms = 0.0;  // its cold build in the measured run (median of the samples that built it)
        // The order of its form among the forms of its module (any device) the file builds, and
        // the forms a worker process may have built before it: a worker that built another form of
        // the module builds this one only when this one holds all of it.
        int stage = 1;
        std::vector<int> follows;
        bool covered = false;
        std::string why_not;      // when not covered: what keeps the warm-up from building it
        std::string import_from;  // the Python module that defines its kernels
        std::string kernel;       // a kernel's qualname there: the Warp module is that kernel's
        std::vector<warmup_overload> overloads;  // every instance it held (registered in order)
        nlohmann::json options = nlohmann::json::object();  // the options it was built with, block_dim left out
        // The factory calls that re-create its factory-made kernels before it loads, in the order
        // the run made them: {module, qualname, args: [[name, "pos"|"kw"|"star", tagged value]]}.
        nlohmann::json factories = nlohmann::json::array();
        // The tests that built it in the measured run (a suite's; "" is collection or set-up):
        // what a change that invalidates it will cost, and whom.
        std::vector<std::string> tests;
    };

    // warmup --verify: the warm-up run in fresh private caches, then the program on that cache.
    struct warmup_check
    {
        int samples = 0;
        // What the file said it did (its --results, first sample): the identities it built as
        // measured, those it built under another hash, and those it could not build, each "module
        // hash7 on device [block_dim N]" and, for a failure, ": why". results_read is false when the
        // file wrote none (it stopped before its end, or a recording without them).
        bool results_read = false;
        int file_built = 0;
        std::vector<std::string> file_other;
        std::vector<std::string> file_failed;
        bool program_ran = false;  // the program ran on the primed cache (else nothing is known of what it built)
        // Of the run's identities, those the program did not build on the primed cache (first
        // sample): the warm-up's measured coverage.
        std::optional<int> covered_measured;
        // The program's cold wall on fresh private caches, timed beside the warm-up (a sample
        // before each primed one, interleaved): the cold run the step is judged against.
        stat cold_wall_beside_ms;
        std::optional<double> warmup_and_primed_ms;  // the warm-up's wall + the program's on its cache (medians)
        // warm-up + primed over the cold run beside it, and the band within which it is "about one
        // cold run" (the larger spread of the three walls over the cold median, at least 1%)
        std::optional<double> of_cold;
        std::optional<double> of_cold_band;
        // What of_cold says, decided in the analysis: not judged when the warm-up built nothing
        // (its time is then no warm-up's) or no cold run was timed beside it; indicative on fewer
        // than 3 cold samples (one cold run beside one primed run is noise); why, in words.
        warmup_cost cost = warmup_cost::not_judged;
        bool cost_indicative = false;
        std::string cost_why;
        // The file's own wall at each number of worker processes tried (the samples alternate
        // between them: each worker writes its own precompiled header on the CPU, so more workers
        // are not always faster), and the number picked: the lowest median, written into the file.
        struct worker_trial
        {
            int workers = 0;
            stat wall_ms;
        };
        std::vector<worker_trial> worker_trials;
        std::optional<int> workers_picked;
        stat warmup_wall_ms;     // the warm-up's process, start to exit
        stat warmup_build_ms;    // from its first build's start to its last build's end
        int warmup_builds = 0;   // identities it compiled (first sample)
        stat primed_wall_ms;     // the program on the cache the warm-up filled
        stat warm_wall_ms;       // the program again on that cache (its own warm wall)
        std::optional<double> wall_gap_ms;  // primed median - warm median
        std::optional<double> band_ms;      // max(1% of the warm median, 2 x the larger MAD)
        std::optional<double> serial_cold_build_ms;  // the measured run's cold module work (its report)
        // Identities the program still compiled on the primed cache, as "module hash7 on device
        // [block_dim N] (ms)": covered ones fail the check; uncovered ones were expected.
        std::vector<std::string> covered_built;
        std::vector<std::string> uncovered_built;
        std::vector<std::string> new_built;  // built at run time but not in the measured run
        warmup_verdict verdict = warmup_verdict::failed;
        std::vector<std::string> reasons;
    };

    struct warmup_plan
    {
        std::string source;                // the report it was planned from (path or @ID)
        std::string project;               // the measured command's folder: the file looks there last for the program
        std::string command;               // the measured command, one line
        std::string warp_version;
        std::string import_root;           // the folder the program's modules are imported from (measured)
        // The command's own script, in import_root: kernels defined in it (module __main__) are
        // built from its definitions, without its `if __name__ == "__main__":` block. "" when the
        // command has none (a notebook cell, python -c).
        std::string entry_script;
        // A notebook cell's run: its code (its %%warp_setup code first), which warp-probe writes
        // into NAME_cell.py beside the plan NAME.json, in place of a script; the plan holds only
        // `cell`, never code.
        bool cell = false;
        std::string cell_code;    // what NAME_cell.py holds; the plan holds its SHA-256
        std::string plan_digest;  // the SHA-256 of the plan as written
        std::string ledger;       // where it was noted as written here ("" when it was not)
        // Further folders the program imported its kernels' modules from (a test folder pytest put
        // on sys.path, a package outside import_root), searched after it.
        std::vector<std::string> import_paths;
        // The top-level packages (or modules) the file imports kernels and factories from; those of
        // them found in import_root are the program's own (the file finds the program by them).
        std::vector<std::string> packages;
        std::vector<std::string> root_packages;
        int workers = 1;
        std::string device;                // --device: replaces each CUDA device; "" keeps the measured ones
        std::vector<int> arch;             // --arch: CUDA architectures built ahead of time as well
        nlohmann::json config = nlohmann::json::object();  // wp.config values the program set before its first load
        std::vector<warmup_target> targets;  // in the order the run loaded them
        int covered = 0;
        int uncovered = 0;
        double covered_ms = 0.0;
        double total_ms = 0.0;
        // What the identities it leaves cost the program at run time, an estimate: their builds in
        // the measured run, plus the precompiled header the first of them writes on the CPU (Warp
        // writes one per thread of each process, outside the kernel cache, so a primed program
        // pays it again for its first build): header_ms, the run's own.
        double header_ms = 0.0;
        double left_estimate_ms = 0.0;
        std::vector<std::string> notes;
        // The plan as the runtime reads it (render_warmup_plan: JSON, a target a line), kept for the
        // fronts; the runtime (warmup_runtime_text) is the same for every plan of this version.
        std::string plan_text;
        std::string script_path;  // where the runtime was written ("" when not)
        std::string plan_path;    // where the plan was written, beside it
        std::optional<warmup_check> check;
    };

    void to_json(nlohmann::json& j, const warmup_plan& p);
}

#endif
