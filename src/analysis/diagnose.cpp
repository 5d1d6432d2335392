// Diagnoses: runs every detector of the registry (src/analysis/mechanisms/) on the report's
// good samples and orders what they found by the time at stake.
#include "xwarp/analysis/diagnose.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "mechanisms/detector.hpp"
#include "xwarp/analysis/suite.hpp"

namespace xwarp
{
    namespace
    {
        // A report written before xwarp recorded owners (or a file its table does not name):
        // the path rules of that time. A file in a folder of installed packages, or outside the
        // measured folder, is not the program's own; "<cell>" and relative paths are. A file an
        // installed distribution put inside the project (pip install --target vendor/) is found
        // by the RECORD beside its top package, where the files are still there.
        bool installed_under(const std::string& file, const std::string& project)
        {
            namespace fs = std::filesystem;
            std::error_code ec;
            for (fs::path dir = fs::path(file).parent_path(); dir.string().size() + 1 >= project.size() && !dir.empty();
                 dir = dir.parent_path())
            {
                const std::string rel = fs::path(file).lexically_relative(dir).generic_string();
                for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
                {
                    const std::string name = it->path().filename().string();
                    if (name.size() < 10 || name.compare(name.size() - 10, 10, ".dist-info") != 0)
                    {
                        continue;
                    }
                    std::ifstream record(it->path() / "RECORD");
                    std::string line;
                    while (std::getline(record, line))
                    {
                        if (line.compare(0, rel.size() + 1, rel + ",") == 0)
                        {
                            return true;
                        }
                    }
                }
                if (dir == dir.parent_path() || dir.string() + "/" == project)
                {
                    break;
                }
            }
            return false;
        }

        file_owner owner_by_path(const std::string& file, const std::string& cwd)
        {
            const std::string older = " (by its path alone: the report has no owners recorded)";
            if (file.empty() || file[0] != '/')
            {
                return {owner_kind::project, "", "", file.empty() || file[0] == '<' ? "the notebook cell" : "a path relative to the project"};
            }
            if (file.find("/site-packages/") != std::string::npos || file.find("/dist-packages/") != std::string::npos)
            {
                return {owner_kind::installed, "", "", "in a folder of installed packages" + older};
            }
            const std::string folder = cwd.empty() || cwd.back() == '/' ? cwd : cwd + "/";
            if (!folder.empty() && file.rfind(folder, 0) != 0)
            {
                return {owner_kind::installed, "", "", "outside the measured folder " + cwd + older};
            }
            if (installed_under(file, folder))
            {
                return {owner_kind::installed, "", "", "listed in a RECORD inside the measured folder" + older};
            }
            return {owner_kind::project, "", "", "inside the measured folder " + cwd + older};
        }

        constexpr const char* no_switch_sentence = "From your side there is nothing to switch at run time. ";

        std::string lever_measures_sentence(const std::string& lever)
        {
            return "From your side: the what-if lever " + lever
                   + " measures the change without editing anything, but only the library's maintainers can make it. ";
        }

        // Each finding's owner, from the report's table where it has one. A finding caused in
        // library code says so: what the user can do from their side, and the measurement to
        // send the maintainers; one in a file that is nobody's known code says that. warp-probe
        // fix patches neither.
        void mark_owners(std::vector<finding>& findings, const report& r)
        {
            for (auto& f : findings)
            {
                if (!f.location)
                {
                    continue;
                }
                const file_owner* recorded = r.ownership ? r.ownership->of(f.location->file) : nullptr;
                f.owner = recorded != nullptr ? *recorded : owner_by_path(f.location->file, r.cwd);
                f.library = f.owner->library();
                if (f.library)
                {
                    const std::string side =
                        f.lever.empty() ? std::string(no_switch_sentence) : lever_measures_sentence(f.lever.str());
                    f.recommendation = "This is library code (" + f.location->file + ", " + owner_phrase(*f.owner)
                                       + "): not yours to edit. " + side
                                       + "Send them this finding with its measurement (the evidence above; warp-probe report "
                                         "--format json has it whole). The change it needs: "
                                       + f.recommendation.str();
                }
                else if (f.owner->kind == owner_kind::elsewhere)
                {
                    f.recommendation = "This file (" + f.location->file
                                       + ") is not in an installed package and not in this project: edit it where it lives "
                                         "(warp-probe fix patches only the project's files). The change it needs: "
                                       + f.recommendation.str();
                }
            }
        }
    }

    void say_library_lever_did_not_apply(finding& f)
    {
        if (!f.library || f.lever.empty())
        {
            return;
        }
        std::string text = f.recommendation.str();
        const std::string said = lever_measures_sentence(f.lever.str());
        const auto at = text.find(said);
        if (at != std::string::npos)
        {
            text.replace(at, said.size(), "From your side: the what-if lever " + f.lever.str()
                                              + " found nothing to change at run time here (its replay did not apply), "
                                                "so only the library's maintainers can make the change. ");
            f.recommendation = text;
        }
    }

    void diagnose(report& r)
    {
        r.findings.clear();
        r.declined.clear();
        if (!r.result.valid)
        {
            return;
        }
        detect::sink out;
        {
            // The context's tables (hash moves and their classes, sequences) are freed before
            // the findings are sorted into the report: at scale that step is the peak.
            const detect::context ctx(r);
            if (ctx.good.empty())
            {
                return;
            }
            // Room for what the detectors can make, nearly at most: a churn finding per hash move
            // of the first good sample (only that sample's moves make findings), one per block_dim
            // spread and per identity compiled more than once, and a few about the whole run. More
            // grow the vector as usual. Room for every sample's moves and every rebuilt group (a
            // hash churn group is those moves again) was twice the findings of a churning report,
            // and the heap handed back pages already written: a megabyte resident at 10,000
            // identities.
            std::size_t expected = 32 + ctx.moves.front().size();
            for (const auto& g : r.result.rebuilt)
            {
                expected += g.kind == rebuild_kind::block_dim_spread ? 1 : 0;
            }
            for (const auto& id : r.result.identities)
            {
                expected += id.builds > 1 ? 1 : 0;
            }
            out.findings.reserve(expected);
            for (const auto* d : detect::detectors())
            {
                d->detect(ctx, out);
                if (out.stop)
                {
                    break;
                }
            }
        }
        // Sorted as indices, then put in that order in place (cycle by cycle, by swaps): a
        // finding is a few hundred bytes, and a second vector held them twice.
        std::vector<std::size_t> order(out.findings.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(),
                         order.end(),
                         [&out](std::size_t ia, std::size_t ib)
                         {
                             const finding& a = out.findings[ia];
                             const finding& b = out.findings[ib];
                             // by ms at stake; unestimated last; a diagnosis before an advisory on a tie
                             const double sa = a.savings_ms.value_or(-1.0);
                             const double sb = b.savings_ms.value_or(-1.0);
                             if (sa != sb)
                             {
                                 return sa > sb;
                             }
                             return a.kind == finding_kind::diagnosis && b.kind != finding_kind::diagnosis;
                         });
        // order[i] is the finding that belongs at i: follow each cycle once
        for (std::size_t start = 0; start < order.size(); ++start)
        {
            std::size_t at = start;
            while (order[at] != start)
            {
                const std::size_t from = order[at];
                std::swap(out.findings[at], out.findings[from]);
                order[at] = at;
                at = from;
            }
            order[at] = at;
        }
        mark_owners(out.findings, r);
        for (auto& f : out.findings)
        {
            f.savings_clock = r.result.module_clock;  // every estimate was made on it
        }
        if (const sample* first = r.first_good())
        {
            attribute_to_tests(out.findings, first->cold);
        }
        r.findings = std::move(out.findings);
        r.declined = std::move(out.declined);
    }
}
