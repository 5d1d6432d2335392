// The magics with a fake host: option parsing, setup storage, history, export, compare by
// name, and clear usage errors. Real probes of cells run in tests/python (the real kernel).
#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/fronts/magics/magics.hpp"
#include "xwarp/render/view.hpp"
#include "xwarp/store/run_store.hpp"
#include "xwarp/model/json_io.hpp"
#include "xwarp/engine/os/tempdir.hpp"
#include "../../src/fronts/magics/common.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    struct fake_host : magic_host
    {
        std::string cwd = "/tmp";
        std::vector<nlohmann::json> shown;
        std::vector<std::string> ids;
        std::map<std::string, nlohmann::json> variables;

        std::string working_directory() override { return cwd; }
        std::string python_executable() override { return "/usr/bin/python3"; }
        bool interrupt_requested() override { return false; }
        void show(const nlohmann::json& bundle, const std::string& id, bool) override
        {
            shown.push_back(bundle);
            ids.push_back(id);
        }
        void bind_variable(const std::string& name, const nlohmann::json& r, const std::string&) override
        {
            variables[name] = r;
        }
    };

    struct fixture
    {
        std::shared_ptr<probe_session> session = std::make_shared<probe_session>();
        magic_registry registry;
        fake_host host;
        fixture()
        {
            session->history_option = "off";  // a unit test never writes the user's store
            register_warp_magics(registry, session);
        }
        line_magic& line(const std::string& n) { return *registry.line_magics().at(n); }
        cell_magic& cell(const std::string& n) { return *registry.cell_magics().at(n); }
    };

    report measured(double cold_ms, std::vector<std::string> hashes)
    {
        report r;
        r.command = {"python", "<cell>"};
        r.env.warp_version = "1.19.0";
        for (int i = 1; i <= 3; ++i)
        {
            std::vector<module_load> loads;
            for (const auto& h : hashes)
            {
                loads.push_back(load("__main__", h, cold_ms / hashes.size()));
            }
            r.samples.push_back(make_sample(i, pass(cold_ms + 900, loads), pass(900, {})));
        }
        analyze(r);
        return r;
    }
}

TEST(Magics, RegistryHasEveryMagicOfTheIssue)
{
    fixture f;
    for (const char* n : {"warp_probe", "warp_compare", "warp_history", "warp_export", "warp_whatif", "warp_fix",
                          "warp_warmup", "warp_report"})
    {
        EXPECT_TRUE(f.registry.line_magics().count(n)) << n;
    }
    for (const char* n : {"warp_probe", "warp_setup"})
    {
        EXPECT_TRUE(f.registry.cell_magics().count(n)) << n;
    }
}

TEST(Magics, SetupIsStoredReplacedAppendedAndCleared)
{
    fixture f;
    f.cell("warp_setup").run("", "import warp as wp\nN = 4\n", f.host);
    EXPECT_EQ(f.session->setup_code, "import warp as wp\nN = 4");
    f.cell("warp_setup").run("--append", "M = 2", f.host);
    EXPECT_EQ(f.session->setup_code, "import warp as wp\nN = 4\nM = 2");
    f.cell("warp_setup").run("", "X = 1", f.host);
    EXPECT_EQ(f.session->setup_code, "X = 1");
    f.cell("warp_setup").run("--clear", "", f.host);
    EXPECT_EQ(f.session->setup_code, "");
    EXPECT_NE(f.host.shown.front()["text/plain"].get<std::string>().find("stored (2 lines)"), std::string::npos);
}

TEST(Magics, BadOptionsAreUsageErrorsAndHelpIsOutput)
{
    fixture f;
    EXPECT_THROW(f.cell("warp_probe").run("--samples zero", "x = 1", f.host), magic_error);
    EXPECT_THROW(f.cell("warp_probe").run("--bogus", "x = 1", f.host), magic_error);
    EXPECT_THROW(f.cell("warp_probe").run("", "   \n", f.host), magic_error);
    EXPECT_THROW(f.line("warp_probe").run("--samples 2", f.host), magic_error);  // no command
    EXPECT_THROW(f.line("warp_compare").run("only-one", f.host), magic_error);
    f.cell("warp_probe").run("--help", "ignored", f.host);
    ASSERT_EQ(f.host.shown.size(), 1u);
    EXPECT_NE(f.host.shown[0]["text/plain"].get<std::string>().find("--samples"), std::string::npos);
}

TEST(Magics, ALineThatNeverClosesItsQuoteIsRefusedNotCut)
{
    // own_script's program path with an unbalanced quote ran the command with the end dropped
    fixture f;
    for (const std::string line : {"-- python \"my proj/sim.py", "-- python 'my proj/sim.py", "--expect \"identities<=2 -- x"})
    {
        try
        {
            f.line("warp_probe").run(line, f.host);
            FAIL() << line;
        }
        catch (const magic_error& e)
        {
            EXPECT_NE(std::string(e.what()).find("opens a quote"), std::string::npos) << e.what();
        }
    }
    // a closed quote, an escaped one inside double quotes: a command (not found here), not a quote error
    try
    {
        f.line("warp_probe").run("-- \"no-such-command xwarp\" \"a \\\" b\"", f.host);
        FAIL();
    }
    catch (const magic_error& e)
    {
        EXPECT_EQ(std::string(e.what()), "command not found: no-such-command xwarp");
    }
}

TEST(Magics, MissingCommandIsOneClearError)
{
    fixture f;
    try
    {
        f.line("warp_probe").run("-- no-such-command-xwarp", f.host);
        FAIL();
    }
    catch (const magic_error& e)
    {
        EXPECT_EQ(std::string(e.what()), "command not found: no-such-command-xwarp");
    }
}

TEST(Magics, CompareByNameHistoryAndExport)
{
    fixture f;
    f.session->store("before", measured(3000, {"a", "b"}));
    f.session->store("after", measured(2000, {"b"}));
    f.line("warp_compare").run("before after", f.host);
    ASSERT_EQ(f.host.shown.size(), 1u);
    const auto& bundle = f.host.shown[0];
    EXPECT_EQ(bundle[comparison_mime]["verdict"], "improved");
    EXPECT_NE(bundle["text/html"].get<std::string>().find("data-xwarp=\"verdict\""), std::string::npos);
    EXPECT_NE(bundle["text/plain"].get<std::string>().find("VERDICT: improved"), std::string::npos);

    f.line("warp_history").run("", f.host);
    auto history = f.host.shown.back()["text/plain"].get<std::string>();
    EXPECT_LT(history.find("before"), history.find("after"));

    scoped_temp_dir tmp("xwarp-test-");
    f.line("warp_export").run("after " + tmp.path() + "/after.json", f.host);
    report back = load_report(tmp.path() + "/after.json");
    EXPECT_EQ(back.samples.size(), 3u);
    f.line("warp_export").run("after " + tmp.path() + "/after.html", f.host);
    std::ifstream page(tmp.path() + "/after.html");
    std::string first_line;
    std::getline(page, first_line);
    EXPECT_EQ(first_line, "<!DOCTYPE html>");
    EXPECT_THROW(f.line("warp_export").run("nope " + tmp.path() + "/x.json", f.host), magic_error);
    EXPECT_THROW(f.line("warp_compare").run("before nothing-called-this", f.host), magic_error);
}

TEST(Magics, ARecordedReportIsShownKeptUnderANameAndCompared)
{
    // a report recorded on another machine (a GPU one, for the GPU lesson without a GPU)
    fixture f;
    scoped_temp_dir tmp("xwarp-test-");
    save_json(tmp.path() + "/two.json", report_to_json(measured(3000, {"a", "b"})));
    save_json(tmp.path() + "/one.json", report_to_json(measured(2000, {"b"})));
    f.line("warp_report").run(tmp.path() + "/two.json --name recorded_two", f.host);
    ASSERT_EQ(f.host.shown.size(), 1u);
    EXPECT_EQ(f.host.shown[0][report_mime]["summary"]["identity_count"]["median"], 2);
    EXPECT_NE(f.host.shown[0]["text/html"].get<std::string>().find("data-xwarp=\"identity-map\""), std::string::npos);
    ASSERT_NE(f.session->find("recorded_two"), nullptr);
    // shown without a name, it is not kept
    f.line("warp_report").run(tmp.path() + "/one.json", f.host);
    EXPECT_EQ(f.session->named_runs.size(), 1u);
    f.line("warp_report").run("recorded_two", f.host);  // a run of this notebook, by name
    EXPECT_EQ(f.host.shown.back()[report_mime]["summary"]["identity_count"]["median"], 2);
    f.line("warp_compare").run("recorded_two " + tmp.path() + "/one.json", f.host);
    EXPECT_EQ(f.host.shown.back()[comparison_mime]["verdict"], "improved");
    EXPECT_THROW(f.line("warp_report").run(tmp.path() + "/missing.json", f.host), magic_error);
    EXPECT_THROW(f.line("warp_report").run("", f.host), magic_error);
    // a report shown under a name is data: no magic runs its command without --run (each one
    // says what it would run)
    for (const char* magic : {"warp_fix", "warp_whatif", "warp_warmup"})
    {
        try
        {
            f.line(magic).run(std::string("recorded_two") + (std::string(magic) == "warp_whatif" ? " auto" : " --verify"), f.host);
            ADD_FAILURE() << magic << " ran a shown report's command";
        }
        catch (const magic_error& e)
        {
            EXPECT_NE(std::string(e.what()).find("asks to run what you have not run here"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("add --run to run it"), std::string::npos) << e.what();
        }
    }
    try
    {
        f.line("warp_compare").run("recorded_two recorded_two --until-settled", f.host);
        ADD_FAILURE() << "%warp_compare --until-settled re-ran a shown report";
    }
    catch (const magic_error& e)
    {
        EXPECT_NE(std::string(e.what()).find("asks to run what you have not run here"), std::string::npos) << e.what();
    }
}

TEST(Magics, HistoryAndCompareReadTheStoreAfterARestart)
{
    scoped_temp_dir tmp("xwarp-test-");
    const std::string path = tmp.path() + "/history.sqlite3";
    std::int64_t before_id = 0;
    {
        // What an earlier kernel left: two runs stored under their probe names.
        std::vector<std::string> notes;
        run_store store(path, &notes);
        report before = measured(3000, {"a", "b"});
        before.label = "before";
        analyze(before);
        before_id = store.add_report(before, run_kind::magic);
        report after = measured(2000, {"b"});
        after.label = "after";
        analyze(after);
        store.add_report(after, run_kind::magic);
    }
    fixture f;  // a new session: nothing in memory
    f.session->history_option = path;
    f.line("warp_history").run("", f.host);
    const auto listed = f.host.shown.back()["text/plain"].get<std::string>();
    EXPECT_LT(listed.find("after"), listed.find("before"));  // newest first
    EXPECT_NE(f.host.shown.back()["text/html"].get<std::string>().find("@" + std::to_string(before_id)), std::string::npos);

    f.line("warp_history").run("--label before", f.host);
    const auto filtered = f.host.shown.back()["text/plain"].get<std::string>();
    EXPECT_EQ(filtered.find(" after "), std::string::npos);
    EXPECT_NE(filtered.find("before"), std::string::npos);

    // by id and by label, though this session never ran them
    f.line("warp_compare").run("@" + std::to_string(before_id) + " after", f.host);
    EXPECT_EQ(f.host.shown.back()[comparison_mime]["verdict"], "improved");
    EXPECT_THROW(f.line("warp_compare").run("@999 after", f.host), magic_error);

    f.session->history_option = "off";
    f.line("warp_history").run("", f.host);
    EXPECT_NE(f.host.shown.back()["text/plain"].get<std::string>().find("off"), std::string::npos);
    EXPECT_THROW(f.line("warp_compare").run("@1 after", f.host), magic_error);
}
