// %warp_fix RUN [options]: each finding of a run of this notebook written as a patch (for a
// cell, against the cell's script: the %%warp_setup code, then the cell) and, with --verify,
// proved on a copy with compare.
#include "common.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/fronts/use_cases.hpp"
#include "xwarp/history/store.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/render/html.hpp"
#include "xwarp/render/text.hpp"

namespace xwarp
{
    namespace
    {
        using namespace magic_parts;

        class warp_fix_line : public line_magic
        {
        public:
            explicit warp_fix_line(std::shared_ptr<probe_session> s) : m_session(std::move(s)) {}

            void run(const std::string& line, magic_host& host) override
            {
                std::string name;
                fix_options options;
                CLI::App app("%warp_fix RUN [options]: write each finding of a run of this notebook as a patch and, with "
                             "--verify, prove it on a copy with compare (a cell's patch is against its script: the "
                             "%%warp_setup code, then the cell)",
                             "%warp_fix");
                app.add_option("name", name, "the run (see %warp_history)")->required();
                add_fix_options(app, options, front::notebook);
                if (!parse_line(app, line, host))
                {
                    return;
                }
                const report* found = &own_run(*m_session, name, "%warp_fix");
                rerun again = rerun_of(*found, name, *m_session, host);
                report saved = *found;
                fix_request request;
                request.finding = options.finding;
                request.lever = options.lever;
                request.out_dir = options.out_dir;
                request.verify = options.verify;
                request.all = options.all;
                request.apply = options.apply;
                request.samples = options.samples;
                if (!again.script.empty())
                {
                    // the cell's findings point at its new script, which is the project to patch
                    unrelabel_cell_locations(saved, again.script, again.setup_lines);
                    saved.cwd = again.tmp->path();  // the cell's folder is its project: its code is not library code
                    analyze(saved);
                    request.root = again.tmp->path();
                }
                progress_display progress(host, false);
                report r;
                try
                {
                    r = fronts::fix(saved, again.options, request, &progress, [&] { return host.interrupt_requested(); });
                }
                catch (const std::exception& e)
                {
                    throw magic_error(std::string("%warp_fix: ") + e.what());
                }
                if (r.status == "interrupted")
                {
                    interrupted(progress);
                }
                if (!again.script.empty())
                {
                    again.relabel(r);
                    analyze(r);  // the findings point at the notebook again
                }
                show(name, r, host, progress);
            }

        private:
            void show(const std::string& name, const report& r, magic_host& host, progress_display& progress)
            {
                std::vector<std::string> notes;
                const auto stored = remember_run(locate_history(m_session->history_option), r, "fix", notes);
                std::string done = "warp-probe: " + std::to_string(r.fixes.size()) + " finding(s) of " + name + " fixed"
                                   + (stored ? ", stored as @" + std::to_string(*stored) : std::string());
                for (const auto& n : notes)
                {
                    done += "\nwarp-probe: " + n;
                }
                progress.finish(done);
                host.show({{"text/html", render_html(r, parse_guide(m_session->guide_text))},
                           {"text/plain", render_fix_text(r)},
                           {report_mime, report_to_json(r)}},
                          "", false);
            }

            std::shared_ptr<probe_session> m_session;
        };
    }

    std::shared_ptr<line_magic> make_warp_fix(std::shared_ptr<probe_session> session)
    {
        return std::make_shared<warp_fix_line>(std::move(session));
    }
}
