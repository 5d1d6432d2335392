// The history subcommands' jobs: the store and the trend analysis called, their refusals turned
// into job_error with the exit code each calls for.
#include "xwarp/jobs/usecases/history_jobs.hpp"

#include <algorithm>
#include <filesystem>

#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/trend.hpp"
#include "engine_errors.hpp"
#include "xwarp/jobs/usecases/exit_codes.hpp"
#include "xwarp/jobs/usecases/use_cases.hpp"
#include "xwarp/store/run_store.hpp"
#include "xwarp/model/json_io.hpp"

namespace xwarp::fronts
{
    using kind = job_error::kind;

    std::optional<std::int64_t> run_id_of(const std::string& text)
    {
        return parse_stored_run_ref(!text.empty() && text[0] == '@' ? text : "@" + text);
    }

    namespace
    {
        // The rows whose `name` contains `text` ("" keeps all); none left is no input.
        template <typename Row>
        void keep_containing(std::vector<Row>& rows, std::string Row::*name, const std::string& text, const char* what,
                             const std::string& series)
        {
            if (text.empty())
            {
                return;
            }
            rows.erase(std::remove_if(rows.begin(), rows.end(),
                                      [&](const Row& r) { return (r.*name).find(text) == std::string::npos; }),
                       rows.end());
            if (rows.empty())
            {
                throw job_error(kind::no_input, std::string("no ") + what + " containing '" + text + "'" + series);
            }
        }

        std::string with_words(const trend_request& r)
        {
            std::string what;
            for (const auto& [name, value] : {std::pair<std::string, std::string>("command", r.command),
                                              {"machine", r.machine}, {"label", r.label}})
            {
                if (!value.empty())
                {
                    what += (what.empty() ? " with " : ", ") + name + " '" + value + "'";
                }
            }
            return what;
        }
    }

    history_session::history_session(const std::string& history_option, bool create, std::vector<std::string>& notes)
        : m_notes(notes)
    {
        const store_location where = locate_store(history_option);
        if (where.off)
        {
            throw job_error(kind::usage, "the history is off (" + where.origin
                                             + "): give --history PATH or set XWARP_HISTORY to a file");
        }
        std::error_code ec;
        if (!create && !std::filesystem::exists(where.path, ec))
        {
            throw job_error(kind::no_input, "no history at " + where.path
                                                + " yet: measure, compare, whatif and the magics store their runs there");
        }
        try
        {
            m_store = std::make_unique<run_store>(where.path, &notes, create ? store_access::write : store_access::read);
        }
        catch (const store_error& e)
        {
            throw from_history_error(e);
        }
        catch (const std::exception& e)
        {
            throw job_error(kind::cannot_write, where.path + ": " + e.what());
        }
    }

    history_session::~history_session() = default;

    const std::string& history_session::path() const
    {
        return m_store->path();
    }

    std::vector<history_run> history_session::list(const history_filter& filter)
    {
        return engine([&] { return m_store->runs(filter); });
    }

    history_run history_session::stored(const std::string& run_ref, std::int64_t& id)
    {
        const auto parsed = run_id_of(run_ref);
        if (!parsed)
        {
            throw job_error(kind::usage, "'" + run_ref + "' is not a run id (@17 or 17)");
        }
        id = *parsed;
        auto run = engine([&] { return m_store->run(id); });
        if (!run)
        {
            throw job_error(kind::no_input, "no run @" + std::to_string(id) + " in " + path());
        }
        return *run;
    }

    stored_run_view history_session::show(const std::string& run_ref)
    {
        std::int64_t id = 0;
        stored_run_view out;
        out.run = stored(run_ref, id);
        out.identities = engine([&] { return m_store->identities(id); });
        return out;
    }

    std::string history_session::export_json(const std::string& run_ref)
    {
        std::int64_t id = 0;
        stored(run_ref, id);
        // what a damaged page gave back is no report: valid JSON (and UTF-8) or nothing
        std::string text = engine([&] { return m_store->report_json(id); });
        if (nlohmann::json::parse(text, nullptr, false).is_discarded())
        {
            throw job_error(kind::bad_input, "run @" + std::to_string(id) + " in " + path()
                                                 + " is damaged (its report is not valid JSON): nothing written");
        }
        return text;
    }

    history_diff history_session::diff(const std::string& a_ref, const std::string& b_ref)
    {
        if (!run_id_of(a_ref) || !run_id_of(b_ref))
        {
            throw job_error(kind::usage, "diff takes two run ids (@17 @18)");
        }
        std::int64_t a = 0;
        std::int64_t b = 0;
        const history_run ra = stored(a_ref, a);
        const history_run rb = stored(b_ref, b);
        return engine([&] { return build_history_diff(ra, m_store->identities(a), rb, m_store->identities(b), m_store->tests(b)); });
    }

    history_run history_session::newest_matching(const trend_request& request)
    {
        history_filter f;
        f.command = request.command;
        f.machine = request.machine;
        f.label = request.label;
        f.limit = 1;
        auto runs = list(f);
        if (runs.empty())
        {
            throw job_error(kind::no_input, "no stored run" + with_words(request) + " in " + path());
        }
        return runs.front();
    }

    history_trend history_session::trend(const trend_request& request)
    {
        const history_run newest = newest_matching(request);
        return engine([&]
        {
            const auto runs = m_store->series(newest.fp.machine, newest.fp.command);
            std::vector<std::vector<history_identity>> rows;
            std::vector<std::vector<test_cost>> tests;
            for (const auto& run : runs)
            {
                rows.push_back(m_store->identities(run.id));
                tests.push_back(m_store->tests(run.id));
            }
            history_trend t = build_trend(runs, rows);
            add_test_trends(t, tests);
            const std::string series = " in the runs of " + newest.fp.command + " on " + newest.fp.machine;
            keep_containing(t.tests, &test_trend::test, request.test, "test", series);
            keep_containing(t.modules, &module_trend::module, request.module, "module", series);
            return t;
        });
    }

    machine_table history_session::table(const trend_request& request)
    {
        const history_run newest = newest_matching(request);
        return engine([&]
        {
            const auto latest = m_store->latest_per_machine(newest.fp.command);
            std::vector<std::vector<history_identity>> rows;
            for (const auto& run : latest)
            {
                rows.push_back(m_store->identities(run.id));
            }
            return build_machine_table(newest.fp.command, latest, rows);
        });
    }

    std::vector<imported_file> history_session::import(const std::vector<std::string>& files)
    {
        std::vector<imported_file> out;
        for (const auto& file : files)
        {
            imported_file done;
            done.file = file;
            report r;
            try
            {
                r = load_report(file);
            }
            catch (const report_error& e)
            {
                done.error = e.what();
                done.error_exit = e.which() == report_error::kind::missing ? exit_code::no_input : exit_code::bad_input;
                out.push_back(std::move(done));
                continue;
            }
            analyze(r);
            engine([&]
            {
                done.already_stored = m_store->find(r).has_value();
                done.id = m_store->add_report(r, run_kind::import);
            });
            out.push_back(std::move(done));
        }
        return out;
    }
}
