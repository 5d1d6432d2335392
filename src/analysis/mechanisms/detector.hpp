// What every detector shares: the diagnosis context (the good samples and the hash moves,
// classified once), the sink detectors write to, and small helpers. Private to the analysis
// layer: only src/analysis/ includes it.
#ifndef XWARP_ANALYSIS_MECHANISMS_DETECTOR_HPP
#define XWARP_ANALYSIS_MECHANISMS_DETECTOR_HPP

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xwarp/analysis/diagnose.hpp"
#include "xwarp/analysis/fixes.hpp"
#include "xwarp/analysis/mechanisms.hpp"
#include "xwarp/model/report.hpp"
#include "xwarp/model/tuple_hash.hpp"

namespace xwarp::detect
{
    // A hash change as the context holds it: its detail as compact text. As a tree each one took
    // ~400 bytes in small allocations, and a report of 100,000 identities holds 50,000 through
    // every detector; only the churn detector reads a detail, to write it into a cause.
    struct held_change
    {
        std::optional<change_kind> kind;  // none when the move returns to an earlier hash
        json_text detail;
    };

    // One move of a module's hash between two consecutive loads of the same (process, module,
    // device, block_dim) in a cold pass, with its cause.
    struct hash_move
    {
        std::int64_t pid = 0;
        int block_dim = -1;
        const module_load* before = nullptr;
        const module_load* after = nullptr;  // its module and device are the move's (not copied: a
                                             // report of 100,000 identities makes 50,000 moves)
        bool returning = false;  // back to a hash this sequence had before (thrash)
        std::size_t sequence = 0;  // its (process, module, device, block_dim) among its pass's sequences
        held_change change;      // no kind when returning
        shared_text mechanism;   // the mechanism the move is attributed to

        const shared_text& module() const { return after->module; }
        const std::string& device() const { return after->device; }
    };

    // Modules that could merge: module="unique" modules with one kernel, and small named modules
    // (at most two kernels), of one pass. A merge keeps every kernel's block_dim and options, so
    // only modules with the same process, device, block_dim and options (block_dim aside) group;
    // a module built at several block_dims groups with none.
    struct module_group
    {
        std::int64_t pid = 0;
        std::string device;
        int block_dim = -1;
        std::vector<const module_load*> modules;  // one load per module: its last build
    };

    struct granular_modules
    {
        std::vector<module_group> unique;
        std::vector<module_group> small;
        std::vector<std::string> spread_small;  // small modules built at several block_dims
        double smallest_ms = 0.0;               // the cheapest build among them (header aside)
    };

    granular_modules granular(const run_result& run, xwarp::clock on);

    // A merge finding's cause (CS-4, CS-9) as JSON text, written from parts: as a tree of copies
    // it listed every module twice and was most of those detectors' time at 50,000 modules.
    // append_merge_group adds {"block_dim":..,"modules":[..]} to the comma-joined groups.
    void append_merge_group(std::string& groups, int block_dim, const std::vector<const module_load*>& modules);
    json_text merge_cause(double upper_bound_ms, const std::string& groups, const std::vector<std::string_view>& modules);

    // A merge finding's saving (CS-4, CS-9): the median over the good samples of what merging
    // the groups saves on this device (the fixed share of each extra build), the range it may
    // fall in, and the cause; the evidence gets the sentence that says so.
    void set_merge_saving(finding& f, const std::vector<double>& per_sample_ms, const std::string& groups,
                          const std::vector<std::string_view>& modules, xwarp::clock on);


    // Loads of one (process, module, device, block_dim) each, in load order: sequence q is
    // loads[starts[q]] up to loads[starts[q + 1]] (one vector: a vector per sequence was an
    // allocation per module).
    struct load_sequences
    {
        std::vector<const module_load*> loads;
        std::vector<std::size_t> starts{0};
        std::size_t size() const { return starts.size() - 1; }
        const module_load* const* begin(std::size_t q) const { return loads.data() + starts[q]; }
        std::size_t length(std::size_t q) const { return starts[q + 1] - starts[q]; }
    };

    class context
    {
    public:
        explicit context(const report& r);

        const report& r;
        std::vector<const sample*> good;            // samples whose two passes succeeded
        std::vector<std::vector<hash_move>> moves;  // per good sample, in load order

        const run_result& first_cold() const { return good.front()->cold; }
        // The clock the findings' estimates are on: the loading threads' CPU time where every
        // load recorded it (summarize decided), else Warp's module timers.
        xwarp::clock estimates_on() const { return r.result.module_clock; }
        // the first good sample's warm pass; an empty pass for a one-pass sample (none was made)
        const run_result& first_warm() const
        {
            static const run_result none;
            return good.front()->warm ? *good.front()->warm : none;
        }

        // Block_dims the launches of the first good cold pass used, per (module, device), with
        // the kernels launched at each: views of the launches' strings, which outlive the context
        // (copies were a fifth of its memory at 50,000 launched modules). Made when first asked:
        // only modules built at several block_dims or preloaded are looked up, and a map of
        // every launched module was a megabyte per 5,000 held through every detector.
        using launched_map =
            std::map<std::pair<std::string_view, std::string_view>, std::map<int, std::set<std::string_view>>>;
        const launched_map& launched() const;

        // The merge candidates of each good sample's cold pass (CS-4 and CS-9 both read them).
        const granular_modules& granular_of(std::size_t good_index) const { return m_granular[good_index]; }

        // A load a preload made at a block_dim no launch of its module used (preload-block-dim).
        bool unused_preload_variant(const module_load& l) const;

        // The short hashes the (process, module, device, block_dim) of a move of the first good
        // cold pass went through in that pass, repeats merged.
        std::vector<std::string> first_sequence(const hash_move& first_pass_move) const;

    private:
        load_sequences m_first_sequences;  // of the first good cold pass
        mutable std::optional<launched_map> m_launched;
        std::vector<granular_modules> m_granular;
    };

    // What merging groups would save, sample by sample (CS-4's small modules, CS-9's unique
    // ones): for each good sample, the fixed share of each extra build of the groups of at least
    // `min_modules` modules, per device; from the first sample, the modules' names and the groups
    // as the cause's text. `groups_of` picks the sample's groups from its granular_modules.
    struct merge_estimates
    {
        std::map<std::string, std::vector<double>> per_device;           // device -> a saving per sample
        std::map<std::string, std::vector<std::string_view>> names;      // views of the loads' strings
        std::map<std::string, std::string> groups_text;                  // device -> the cause's groups
    };
    merge_estimates estimate_merges(const context& ctx, std::size_t min_modules,
                                    const std::vector<module_group>& (*groups_of)(const granular_modules&));

    // A merge finding on one device (CS-4, CS-9): its modules, the evidence with the saving the
    // estimate gives, the recommendation, and which of the modules were created between launches.
    finding merge_finding(const context& ctx, const std::string& mechanism, const merge_estimates& merges,
                          const std::string& device, const std::string& evidence, const std::string& recommendation);

    struct sink
    {
        // Reserved by diagnose for about as many findings as the hash moves and rebuilt groups
        // can make, then sorted in place and moved into the report whole: a report of thousands
        // of churning modules has thousands of findings (a few hundred bytes each), and a vector
        // grown by doubling, or a deque copied into the report, held them twice at the
        // analysis' peak memory.
        std::vector<finding> findings;
        std::vector<declined_lever> declined;
        bool stop = false;  // the detector's finding makes the others moot (compile-small-share)
    };

    using detect_fn = void (*)(const context&, sink&);

    // What a churn mechanism explains: a kind of hash change (classify_hash_change's), a hash
    // that came back, or any change no other mechanism claims.
    struct change_claim
    {
        enum class of
        {
            kind,
            returning,
            any_other,
        };
        of what = of::kind;
        change_kind kind = change_kind::unknown;

        static change_claim change(change_kind k) { return {of::kind, k}; }
        static change_claim returning() { return {of::returning, change_kind::unknown}; }
        static change_claim any_other() { return {of::any_other, change_kind::unknown}; }
    };

    // A registry row: what the mechanism is, and the function that finds it. A churn mechanism
    // also names the hash changes it explains: the moves are attributed by asking the registry,
    // not a table beside it.
    struct detector
    {
        mechanism_info info;
        detect_fn detect;
        std::vector<change_claim> claims = {};
        // For a mechanism without a lever, its code form (warp-probe fix); those with a lever
        // keep theirs in the lever's file.
        code_form_fn code_form = nullptr;
    };

    // The detector of a mechanism id, or nullptr.
    const detector* find_detector(const std::string& id);

    // The mechanism whose detector claims this kind of hash change (else the one that claims
    // any other), and the one that claims a hash that came back.
    const std::string& mechanism_of_change(change_kind kind);
    const std::string& mechanism_of_returning();

    // Every detector, in the order they run (src/analysis/mechanisms.cpp).
    const std::vector<const detector*>& detectors();

    // ---- helpers ------------------------------------------------------------------------------

    // A finding with the registry's title, kind, guide anchor and lever filled in.
    finding make_finding(const std::string& mechanism, shared_text module, const std::string& device);
    declined_lever make_declined(const std::string& mechanism, const std::string& module, const std::string& device);

    // Records one place that caused the finding; the first becomes the primary location.
    void add_location(finding& f, const std::optional<std::string>& file, const std::optional<int>& line,
                      const std::string& what);

    std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
    std::string join(const std::vector<std::string_view>& v, const std::string& sep = ", ");
    // The first `shown` of v joined, then "and N more": evidence is prose to read, the cause
    // keeps the whole list.
    std::string join_first(const std::vector<std::string>& v, const std::string& sep, std::size_t shown);

    // Names in first-seen order, each once: linear however many (reports can hold 100,000).
    class unique_names
    {
    public:
        bool add(const std::string& name)
        {
            if (!m_seen.insert(name).second)
            {
                return false;
            }
            m_names.push_back(name);
            return true;
        }
        const std::vector<std::string>& names() const { return m_names; }
        bool empty() const { return m_names.empty(); }

    private:
        std::set<std::string> m_seen;
        std::vector<std::string> m_names;
    };

    // The dirtying events of a process recorded strictly between two sequence numbers (they
    // are recorded in order, so this is a binary search, not a scan).
    std::pair<std::vector<dirty_event>::const_iterator, std::vector<dirty_event>::const_iterator>
    dirty_events_between(const process_record& p, std::int64_t after_seq, std::int64_t before_seq);
    const process_record* process_of(const run_result& run, std::int64_t pid);

    // The build cost a fix can remove. A precompiled header the build wrote stays when the fix
    // keeps another build that needs the same header (same module at the same block_dim: the
    // cost moves to whichever build comes first); otherwise it goes too.
    // On `on`, the clock the report's estimates are on (context::estimates_on).
    double removable(const module_load& l, xwarp::clock on, bool header_kept = true);

    // A wp.set_module_options call that set `key` (args come from a report file: any shape).
    bool sets_module_option(const api_call_event& c, const std::string& key);

    // Something the program did that throws a cache away or keeps it from being used.
    struct cache_cause
    {
        std::string kind;  // clear_kernel_cache, clear_lto_cache, cache_kernels, kernel_cache_dir, env:NAME, ...
        std::string what;  // in words, with the value
        std::optional<std::string> file;
        std::optional<int> line;
        std::int64_t pid = 0;
        std::int64_t seq = 0;
    };

    // The cache causes in one pass. `other`, the sample's other pass, tells a per-run directory
    // (a value that differs between the passes) from a fixed one.
    std::vector<cache_cause> cache_causes(const run_result& run, const run_result* other);

    // The share of a one-kernel CPU module's build that is per-build fixed cost (clang set-up,
    // object emission, JIT load), measured on Warp 1.19 by merging one-kernel modules: 0.56 to
    // 0.79 over five runs (references/mechanisms.md#cs-9). Heavier kernels make it smaller.
    inline constexpr double fixed_cost_share = 0.75;

    // The set of kernel definitions a load carried: plain kernels by key and content hash,
    // generic kernels by key alone (their instances are what the program launched with).
    std::set<std::string> definitions(const content_snapshot& s);

    // A module of a merge group created (its kernel declared, or the module made) after the
    // first module of the group loaded in that process: its kernel came between launches. Where:
    // the factory's call when the kernel came from one, else the declaration.
    struct late_creation
    {
        std::string module;
        std::optional<std::string> file;
        std::optional<int> line;
        nlohmann::json stack = nlohmann::json::array();  // the user frames above the factory, [[file, line]...]
    };
    std::vector<late_creation> created_after_first_load(const run_result& run, const std::vector<std::string_view>& modules);

    // A merge finding (CS-4, CS-9) whose modules were partly created between launches: merged as
    // they are, one module would rebuild at each new kernel (CS-1). Says so in the evidence and
    // the recommendation (the fix is two changes), and in the cause (created_between_launches,
    // late: the places to move), which the lever's plan and the code form read.
    void note_created_between_launches(finding& f, const std::vector<late_creation>& late, std::size_t total);

    // Hash churn attributed to one mechanism, grouped per (module, device): the shared shape
    // of CS-1, CS-3, CS-6, dependency-change, unexplained-rebuild and hash-thrash. triggers are
    // the dirtying events that can cause it (their user line becomes the location).
    void churn_findings(const context& ctx,
                        const std::string& mechanism,
                        const std::vector<std::string>& triggers,
                        const std::function<std::string(const finding&)>& recommend,
                        sink& out);
}

#endif
