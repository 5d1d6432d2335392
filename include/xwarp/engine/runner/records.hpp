// Turning what a pass left behind into the model: the shim's per-process records,
// Warp's own log lines (the fallback source), and the private cache's contents.
#ifndef XWARP_RUNNER_RECORDS_HPP
#define XWARP_RUNNER_RECORDS_HPP

#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "xwarp/model/report.hpp"

namespace xwarp
{
    // The shim's records of one pass (one JSON-lines file per process).
    struct shim_records
    {
        std::vector<process_record> processes;
        std::vector<module_load> loads;        // source "hook"
        std::vector<launch_record> launches;   // per process, in order
        std::int64_t launch_total = 0;
        bool launches_truncated = false;
        int malformed_lines = 0;  // a process killed mid-write leaves a partial last line
        // Records outside the shim contract (contracts/shim_records.schema.json), each named
        // with why: left out, never read by guesswork. The first few are kept with the count.
        static constexpr std::size_t rejected_kept = 5;
        std::vector<std::string> rejected;
        int rejected_count = 0;
        int newer_contract = 0;  // a process record's contract, when newer than this reader's
        // Record files that could not be read, each "NAME: why" (a FIFO, a link, larger than the
        // cap): the program wrote its records folder, so a name there may be anything.
        std::vector<std::string> unreadable;
    };

    // The most one record file is read of (a process that launched two million kernels writes
    // tens of megabytes; a file past this is no shim's).
    inline constexpr std::size_t max_record_file_bytes = 512u << 20;

    shim_records read_shim_records(const std::string& dir);

    // Parses one JSON-lines record stream (exposed for tests and the fuzzer).
    void read_shim_stream(std::istream& in, shim_records& out);

    // The tests a runner's output says failed: pytest's short summary ("FAILED node::id - why",
    // "ERROR node::id") and unittest's ("FAIL: test (module.Class.test)", "ERROR: ..."). At most
    // `cap`, each once.
    void scan_test_failures(std::istream& in, std::vector<std::string>& out, std::size_t cap = 200);

    // Warp's own log lines: the fallback when the hooks are missing, and a cross-check.
    struct log_scan
    {
        std::vector<module_load> loads;  // source "log", in output order
        double native_ms_total = 0.0;
        int native_lines = 0;
    };

    // "Module NAME HASH7 load on device 'DEV' [(block_dim=N)] took X ms  (compiled|cached|error)",
    // every form Warp printed from 1.3 on.
    std::optional<module_load> parse_module_line(const std::string& line);

    // "Compile x86 took X ms" / "Compile CUDA (arch=.., mode=.., block_dim=..) took X ms"
    std::optional<double> parse_compile_line(const std::string& line, std::string* kind = nullptr);

    // Scans a whole output stream. Native compile lines precede the module line they belong to;
    // they are attributed to it only while loads are serial (the lines carry no module name).
    log_scan scan_warp_log(std::istream& in);

    cache_inventory inventory_cache(const std::string& warp_cache_dir);

    // The module folders (wp_<module>_<hash7>) in a Warp kernel cache, by name, at most `limit`.
    std::vector<std::string> module_folders(const std::string& warp_cache_dir, std::size_t limit = 100000);

    // Where a pass's caches are: its Warp cache (the LTO cache inside it), its CUDA cache and its
    // temporary folder (the per-thread precompiled-header folders).
    struct pass_caches
    {
        std::string warp_cache;
        std::string cuda_cache;
        std::string tmp_dir;
    };

    // What each cache holds now, as files_after/bytes_after (one state per cache_kind, in order).
    std::vector<cache_state> read_cache_states(const pass_caches& where);

    // Sets each state's before from a reading taken when the pass started.
    void note_cache_starts(std::vector<cache_state>& after, const std::vector<cache_state>& before);

    // measure --nvrtc-trace: the *_compile-time-trace*.json files NVRTC left in a pass's kernel
    // cache (one per CUDA module build that went through it). A file that is too large or not
    // JSON costs a note, not the pass.
    std::vector<nvrtc_trace> collect_nvrtc_traces(const std::string& warp_cache_dir, std::vector<std::string>& notes);

    // The trace events of one such file (its text): complete events only, without NVRTC's
    // "Total ..." summaries, at most nvrtc_trace_max_events (the longest). Throws on bad JSON.
    nvrtc_trace nvrtc_trace_of(const std::string& text);

    // The last line of a file that a Python traceback ends with ("ValueError: ..."), whole,
    // wherever it is in the file; empty when there is none.
    std::string last_error_line(const std::string& path);
}

#endif
