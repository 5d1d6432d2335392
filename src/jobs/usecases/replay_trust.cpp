#include "xwarp/jobs/usecases/replay_trust.hpp"

#include <filesystem>
#include <vector>

#include "xwarp/model/digest.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/engine/os/bounded_read.hpp"
#include "xwarp/store/run_store.hpp"

namespace xwarp::fronts
{
    namespace
    {
        // The user's run store, for reading; none with the reason when there is none.
        std::optional<std::string> store_path(const std::string& history_option, std::string& why)
        {
            const store_location where = locate_store(history_option);
            if (where.off)
            {
                why = "the history store is off, so no record shows that this probe wrote it";
                return std::nullopt;
            }
            std::error_code ec;
            if (!std::filesystem::is_regular_file(where.path, ec))
            {
                why = "there is no history store at " + where.path + " that shows this probe wrote it";
                return std::nullopt;
            }
            return where.path;
        }
    }

    replay_check check_report_file(const std::string& path, const std::string& history_option)
    {
        replay_check out;
        const auto store = store_path(history_option, out.why);
        if (!store)
        {
            return out;
        }
        const bounded_read file = read_regular_file(path, max_report_bytes);
        if (!file.ok)
        {
            out.why = "its bytes could not be read (" + file.why + ")";
            return out;
        }
        try
        {
            std::vector<std::string> notes;
            run_store runs(*store, &notes, store_access::read);
            out.ran_here = runs.wrote(sha256_hex(file.text));
            if (!out.ran_here)
            {
                out.why = "its bytes are not a report this probe wrote (no record of its SHA-256 in " + *store
                          + "): whatever command it says it ran, it is someone else's, or an edited copy";
            }
        }
        catch (const std::exception& e)
        {
            out.why = std::string("the history store could not be read (") + e.what() + ")";
        }
        return out;
    }

    replay_check check_stored_run(std::int64_t run_id, const std::string& history_option)
    {
        replay_check out;
        const auto store = store_path(history_option, out.why);
        if (!store)
        {
            return out;
        }
        try
        {
            std::vector<std::string> notes;
            run_store runs(*store, &notes, store_access::read);
            const auto kind = runs.kind_of(run_id);
            out.ran_here = kind == run_kind::measure || kind == run_kind::magic;
            if (!out.ran_here)
            {
                out.why = "@" + std::to_string(run_id) + " was stored " + (kind ? "by " + word_of(*kind) : std::string("by an unknown step"))
                          + ", not measured by this probe here";
            }
        }
        catch (const std::exception& e)
        {
            out.why = std::string("the history store could not be read (") + e.what() + ")";
        }
        return out;
    }

    void write_own_report(const std::string& path, const report& r, const std::string& history_option,
                          std::vector<std::string>& notes)
    {
        save_report_json(path, r);
        const store_location where = locate_store(history_option);
        if (where.off)
        {
            return;
        }
        try
        {
            const bounded_read written = read_regular_file(path, max_report_bytes);
            if (!written.ok)
            {
                notes.push_back("the report written to " + path + " could not be read back to record it (" + written.why + ")");
                return;
            }
            run_store runs(where.path, &notes);
            runs.note_written(sha256_hex(written.text), std::filesystem::absolute(path).string());
        }
        catch (const std::exception& e)
        {
            notes.push_back(std::string("the history store did not record the report written to ") + path + " (" + e.what()
                            + "): it will read back as someone else's");
        }
    }
}
