// The closed sets of words a run, a comparison, a replay, a fix and a warm-up check end in:
// enums in the code, so that a decision is a comparison the compiler checks; their words only at
// the edges (JSON, the history, the renderers). Reading a word not in a set is an error, never
// a silent first member.
#ifndef XWARP_MODEL_VERDICTS_HPP
#define XWARP_MODEL_VERDICTS_HPP

#include <array>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace xwarp
{
    // How a report's samples ended.
    enum class run_status
    {
        ok,           // every sample succeeded
        partial,      // some samples failed
        failed,       // every sample failed
        interrupted,  // the user stopped it
    };

    // What comparing two sets of samples concluded: compare's verdict, and a what-if replay's
    // (not-applied and not-run are a replay's only).
    enum class verdict
    {
        improved,
        regressed,
        inconclusive,
        invalid,         // a side failed, or the launches changed
        unverified,      // the launches could not be checked
        not_comparable,  // different programs
        not_applied,     // the lever found nothing to do in this program
        not_run,         // the replay did not run
    };

    // Whether the launches of two runs are the same work.
    enum class workload_status
    {
        same,
        changed,
        unverified,
    };

    // A fix's patch: measured against the unpatched program, or why not.
    enum class fix_verdict
    {
        no_patch,      // no mechanical form, or library code
        not_verified,  // written, not measured (no --verify)
        verified,      // improved beyond the band, same launches
        no_gain,       // the patched program was not faster at all
        inconclusive,  // faster, but inside the band or not significant: more samples could settle it
        regressed,
        invalid,       // the patched program failed, or its launches changed
    };

    // --all: a verified patch measured with the verified ones before it in the ranked order.
    enum class together_status
    {
        not_measured_together,  // no --all, or fewer than two verified
        first,                  // the first in the ranked order
        still_pays,
        stops_paying,           // --apply leaves it out
        not_combined,           // it could not be measured with the ones before it
    };

    // warmup --verify: every covered identity loaded from the primed cache, or not.
    enum class warmup_verdict
    {
        verified,     // the file built every covered identity and the program built none of them
        partial,      // the file could not build some (each named with why); none it built was built again
        failed,       // an identity the file built was built again, or the file or the program failed
        interrupted,
    };

    // What a finding is: a cause the records show (diagnosis), an opportunity to measure
    // (advisory: a lever whose replay did not pay is declined), or a note (no time at stake).
    enum class finding_kind
    {
        diagnosis,
        advisory,
        note,
    };

    // How one module (per device) came to load under several identities in one cold pass: its
    // hash moved while the program ran (churn), or it was launched at several block_dims.
    enum class rebuild_kind
    {
        hash_churn,
        block_dim_spread,
    };

    // What a timeline span is: a module load, or a phase inside one (nvrtc: a phase NVRTC traced
    // inside the compile).
    enum class span_kind
    {
        load,
        codegen,
        compile,
        header,
        lto,
        nvrtc,
    };

    // A clock a verdict is judged on. Build work is judged on a clock the machine's load cannot
    // move (the loading threads' CPU time); the wall clocks are what the user waits on, and a
    // verdict on one of them says when the load during its samples could explain it.
    enum class clock
    {
        cold_module_work,  // Warp's module timers (wall), summed over the cold pass's loads
        compile_elapsed,   // cold wall - warm wall, per sample
        warm_module_work,  // Warp's module timers summed over the warm pass's loads
        cold_wall,         // the command's cold pass, start to end
        cold_module_cpu,   // the loading threads' CPU time, summed over the cold pass's loads
        warm_module_cpu,   // the same in the warm pass
    };

    // What one clock's samples said: beyond the band either way, or why not.
    enum class clock_outcome
    {
        improved,
        regressed,
        within_noise,     // the change is inside the band
        not_significant,  // beyond the band, the rank test not below 5%
        overlapping,      // beyond the band, fewer than 5 a side, and the sides' samples overlap
        not_available,    // a side has no value on this clock
        machine_busy,     // a wall clock beyond its band by no more than the other processes' load explains
        same_builds,      // a build-work clock beyond its band where both sides built the same identities as often
    };

    // A cache a pass could read from or write to, beside the module binaries it counts.
    enum class cache_kind
    {
        warp_kernels,         // WARP_CACHE_PATH: the modules Warp built (sources and binaries)
        warp_lto,             // its lto/ folder: MathDx LTO artifacts (Warp 1.7+)
        cuda,                 // CUDA_CACHE_PATH: NVRTC's compile cache (12.9+) and the driver's PTX JIT cache
        precompiled_headers,  // the per-thread wp_pch_* folders under TMPDIR (the CPU header)
    };
    // Where a figure came from: the module loads of a pass, and the build times a summary adds.
    enum class figure_source
    {
        unrecorded,  // a summary with no pass to say (its JSON writes "")
        none,        // nothing recorded it
        hook,        // the shim's hooks in Warp
        log,         // Warp's own log lines
        warp_timer,  // Warp's module timers
        wrapper,     // the shim's load wrapper (Warp's timers were off)
        mixed,       // several passes, from more than one source
    };

    // Which pass of a sample a process run is: the program from empty caches, then again on what
    // they kept; a replay's fill of its kept caches; a warm-up file's priming run.
    enum class pass_phase
    {
        cold,
        warm,
        fill,
        warmup,
    };

    // What held a pass's processes so that none outlived it.
    enum class containment_kind
    {
        unrecorded,     // a report written before it was recorded
        pid_namespace,  // a PID namespace of their own
        cgroup,         // a cgroup of their own
        process_tree,   // the recorded process tree
    };

    // Whether the NVRTC warp-probe found caches its compilations (in the CUDA driver's compute
    // cache, CUDA_CACHE_PATH; NVRTC 12.9 and later), as two compiles with its cache trace said.
    // warmup --verify: the warm-up step and the program after it, against a cold run timed beside
    // them (the step pays on one run only when the two together take less).
    enum class warmup_cost
    {
        not_judged,               // the warm-up built nothing, or no cold run was timed beside it
        less_than_one_cold_run,   // beyond the spread: the step pays on this machine
        about_one_cold_run,       // within the spread
        more_than_one_cold_run,   // beyond the spread: it pays only where later runs share its cache
    };

    // Whose code a file is (model/ownership.hpp): the user's project, an installed distribution,
    // the Python installation's own library, Warp itself, or none of these.
    enum class owner_kind
    {
        project,
        installed,
        stdlib,
        warp,
        elsewhere,
    };

    enum class nvrtc_cache_state
    {
        unknown,        // not checked (no NVRTC, or the check could not compile)
        caches,         // the second compile was served from the cache
        not_cached,     // compiled twice, served neither time
        no_driver,      // its cache is the driver's, and no CUDA driver was found
        disabled,       // CUDA_CACHE_DISABLE
        not_supported,  // no cache trace option: an NVRTC before 12.9, without the cache
    };

    template <typename E>
    struct enum_words;  // each set's words, in the order of its members

    template <>
    struct enum_words<run_status>
    {
        static constexpr std::array<std::string_view, 4> words{"ok", "partial", "failed", "interrupted"};
    };
    template <>
    struct enum_words<verdict>
    {
        static constexpr std::array<std::string_view, 8> words{"improved",   "regressed",      "inconclusive", "invalid",
                                                               "unverified", "not-comparable", "not-applied",  "not-run"};
    };
    template <>
    struct enum_words<workload_status>
    {
        static constexpr std::array<std::string_view, 3> words{"same", "changed", "unverified"};
    };
    template <>
    struct enum_words<fix_verdict>
    {
        static constexpr std::array<std::string_view, 7> words{"no-patch",     "not-verified", "verified", "no-gain",
                                                               "inconclusive", "regressed",    "invalid"};
    };
    template <>
    struct enum_words<together_status>
    {
        static constexpr std::array<std::string_view, 5> words{"", "first", "still-pays", "stops-paying", "not-combined"};
    };
    template <>
    struct enum_words<warmup_verdict>
    {
        static constexpr std::array<std::string_view, 4> words{"verified", "partial", "failed", "interrupted"};
    };

    template <>
    struct enum_words<finding_kind>
    {
        static constexpr std::array<std::string_view, 3> words{"diagnosis", "advisory", "note"};
    };
    template <>
    struct enum_words<rebuild_kind>
    {
        static constexpr std::array<std::string_view, 2> words{"hash-churn", "block-dim-spread"};
    };

    template <>
    struct enum_words<span_kind>
    {
        static constexpr std::array<std::string_view, 6> words{"load", "codegen", "compile", "header", "lto", "nvrtc"};
    };

    template <>
    struct enum_words<clock>
    {
        static constexpr std::array<std::string_view, 6> words{"cold_module_ms",  "compile_elapsed_ms", "warm_module_ms",
                                                               "cold_wall_ms",    "cold_module_cpu_ms", "warm_module_cpu_ms"};
    };
    template <>
    struct enum_words<clock_outcome>
    {
        static constexpr std::array<std::string_view, 8> words{"improved",    "regressed", "within-noise", "not-significant",
                                                               "overlapping", "n/a",       "machine-busy", "same-builds"};
    };

    template <>
    struct enum_words<cache_kind>
    {
        static constexpr std::array<std::string_view, 4> words{"warp-kernel-cache", "warp-lto-cache", "cuda-cache",
                                                               "precompiled-headers"};
    };
    template <>
    struct enum_words<figure_source>
    {
        static constexpr std::array<std::string_view, 7> words{"", "none", "hook", "log", "warp-timer", "wrapper", "mixed"};
    };
    template <>
    struct enum_words<pass_phase>
    {
        static constexpr std::array<std::string_view, 4> words{"cold", "warm", "fill", "warmup"};
    };
    template <>
    struct enum_words<containment_kind>
    {
        static constexpr std::array<std::string_view, 4> words{"", "pid-namespace", "cgroup", "process-tree"};
    };
    template <>
    struct enum_words<warmup_cost>
    {
        static constexpr std::array<std::string_view, 4> words{"not-judged", "less-than-one-cold-run", "about-one-cold-run",
                                                               "more-than-one-cold-run"};
    };
    template <>
    struct enum_words<owner_kind>
    {
        static constexpr std::array<std::string_view, 5> words{"project", "installed", "stdlib", "warp", "elsewhere"};
    };
    template <>
    struct enum_words<nvrtc_cache_state>
    {
        static constexpr std::array<std::string_view, 6> words{"unknown", "caches", "not-cached", "no-driver", "disabled",
                                                               "not-supported"};
    };

    // A clock's name in a sentence ("cold module CPU"): how the text, the HTML and the reasons
    // name it. The JSON writes the member's word (cold_module_cpu_ms) where it names a clock.
    inline std::string clock_name(clock c)
    {
        static constexpr std::array<std::string_view, 6> names{"cold module work", "compile elapsed", "warm module work",
                                                               "cold wall",        "cold module CPU", "warm module CPU"};
        return std::string(names.at(static_cast<std::size_t>(c)));
    }

    // A cache's name in a sentence.
    inline std::string cache_name(cache_kind k)
    {
        static constexpr std::array<std::string_view, 4> names{"Warp's kernel cache", "Warp's LTO cache",
                                                               "the CUDA cache (CUDA_CACHE_PATH)", "precompiled headers"};
        return std::string(names.at(static_cast<std::size_t>(k)));
    }

    // The clock a sentence names at its start ("compile elapsed: builds overlapped"), for a report
    // written before the clock was written as a word of its own; nullopt when none does.
    inline std::optional<clock> clock_named_in(std::string_view sentence)
    {
        std::optional<clock> found;
        std::size_t longest = 0;
        for (std::size_t i = 0; i < enum_words<clock>::words.size(); ++i)
        {
            const std::string name = clock_name(static_cast<clock>(i));
            if (sentence.substr(0, name.size()) == name && name.size() > longest)
            {
                found = static_cast<clock>(i);
                longest = name.size();
            }
        }
        return found;
    }

    // Whether the machine's load moves this clock: every wall clock does; CPU time does not (a
    // thread that waits for a CPU is not running).
    inline bool load_moves(clock c)
    {
        return c != clock::cold_module_cpu && c != clock::warm_module_cpu;
    }

    // The word of a member, as the JSON and the history write it.
    template <typename E>
    std::string word_of(E value)
    {
        return std::string(enum_words<E>::words.at(static_cast<std::size_t>(value)));
    }

    // The member a word names, or nullopt.
    template <typename E>
    std::optional<E> member_named(std::string_view word)
    {
        const auto& words = enum_words<E>::words;
        for (std::size_t i = 0; i < words.size(); ++i)
        {
            if (words[i] == word)
            {
                return static_cast<E>(i);
            }
        }
        return std::nullopt;
    }

    // The member a word names; std::invalid_argument naming the word and the set otherwise.
    template <typename E>
    E parse_member(std::string_view word)
    {
        if (const auto e = member_named<E>(word))
        {
            return *e;
        }
        std::string known;
        for (const auto w : enum_words<E>::words)
        {
            known += (known.empty() ? "" : ", ") + std::string(w.empty() ? "\"\"" : w);
        }
        throw std::invalid_argument("\"" + std::string(word) + "\" is none of " + known);
    }

    template <typename E, typename = decltype(enum_words<E>::words)>
    std::ostream& operator<<(std::ostream& out, E value)
    {
        return out << word_of(value);
    }

#define XWARP_VERDICT_JSON(E)                                     \
    inline void to_json(nlohmann::json& j, E value)               \
    {                                                             \
        j = word_of(value);                                       \
    }                                                             \
    inline void from_json(const nlohmann::json& j, E& value)      \
    {                                                             \
        value = parse_member<E>(j.get_ref<const std::string&>()); \
    }
    XWARP_VERDICT_JSON(run_status)
    XWARP_VERDICT_JSON(verdict)
    XWARP_VERDICT_JSON(workload_status)
    XWARP_VERDICT_JSON(fix_verdict)
    XWARP_VERDICT_JSON(finding_kind)
    XWARP_VERDICT_JSON(rebuild_kind)
    XWARP_VERDICT_JSON(span_kind)
    XWARP_VERDICT_JSON(together_status)
    XWARP_VERDICT_JSON(warmup_verdict)
    XWARP_VERDICT_JSON(clock)
    XWARP_VERDICT_JSON(clock_outcome)
    XWARP_VERDICT_JSON(cache_kind)
    XWARP_VERDICT_JSON(nvrtc_cache_state)
    XWARP_VERDICT_JSON(figure_source)
    XWARP_VERDICT_JSON(containment_kind)
    XWARP_VERDICT_JSON(owner_kind)
    XWARP_VERDICT_JSON(warmup_cost)
#undef XWARP_VERDICT_JSON
}

#endif
