// The warm-up plan on synthetic reports (what is covered, in what order, and why the rest is
// not) and the file it renders (every text from the report escaped). The file itself is run and
// verified on real Warp in tests/python/test_warmup.py.
#include "xwarp/model/digest.hpp"
#include "xwarp/version.hpp"
#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/analysis/warmup_plan.hpp"
#include "xwarp/model/contracts.hpp"
#include "xwarp/render/warmup_file.hpp"
#include "xwarp/engine/runner/runner.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    warmup_request device_request(const std::string& device)
    {
        warmup_request w;
        w.device = device;
        return w;
    }

    warmup_request workers_arch_request(int workers, const std::vector<int>& arch)
    {
        warmup_request w;
        w.workers = workers;
        w.arch = arch;
        return w;
    }

    // A load of `module` whose kernels live in the Python module `defined_in`.
    module_load defined(const std::string& module, const std::string& hash, const std::string& defined_in,
                        const std::string& qualname = "k", double ms = 100.0)
    {
        module_load l = load(module, hash, ms);
        l.snapshot->kernels.front().defined_in = defined_in;
        l.snapshot->kernels.front().qualname = qualname;
        return l;
    }

    module_load generic(const std::string& hash, const std::vector<std::string>& dtypes)
    {
        module_load l = load("pkg.ops", hash, 50.0);
        l.snapshot->kernels.clear();
        for (const auto& d : dtypes)
        {
            kernel_entry k{"scale", "h" + d, "a: " + d, true,
                           nlohmann::json::array({{{"array", "array"}, {"dtype", {{"type", d}}}, {"ndim", 1}}})};
            k.defined_in = "pkg.ops";
            k.qualname = "scale";
            l.snapshot->kernels.push_back(k);
        }
        return l;
    }

    report run_of(std::vector<module_load> loads, const std::string& entry = "/proj/app.py")
    {
        report r;
        r.command = {"python3", entry};
        r.cwd = "/proj";
        r.env.cpu_count = 4;
        run_result cold = pass(1000.0, loads);
        if (!entry.empty())
        {
            cold.processes.front().argv = {entry};
        }
        r.samples.push_back(make_sample(1, cold, pass(200.0, {})));
        analyze(r);
        return r;
    }

    const warmup_target& target(const warmup_plan& p, const std::string& hash)
    {
        for (const auto& t : p.targets)
        {
            if (t.hash == hash)
            {
                return t;
            }
        }
        throw std::runtime_error("no target " + hash);
    }
}

TEST(AWarmupPlan, CoversImportedModulesAndLoadsEachFormOfAGenericModuleInOrder)
{
    const warmup_plan p = plan_warmup(run_of({generic("g1", {"float32"}), defined("pkg.a", "a1", "pkg.a"),
                                              generic("g2", {"float32", "float64"})}),
                                      {});
    EXPECT_EQ(p.covered, 3);
    EXPECT_EQ(p.uncovered, 0);
    EXPECT_EQ(p.workers, 4);  // the measured machine's CPUs
    EXPECT_EQ(p.import_root, "/proj");
    EXPECT_EQ(p.entry_script, "app.py");
    EXPECT_EQ(target(p, "g1").stage, 1);
    EXPECT_EQ(target(p, "g2").stage, 2);
    EXPECT_EQ(target(p, "a1").stage, 1);
    ASSERT_EQ(target(p, "g2").overloads.size(), 2u);
    EXPECT_EQ(target(p, "g2").overloads[1].types,
              nlohmann::json::parse(R"([{"array": "array", "dtype": {"type": "float64"}, "ndim": 1}])"));
    EXPECT_EQ(target(p, "a1").import_from, "pkg.a");
    EXPECT_DOUBLE_EQ(p.covered_ms, p.total_ms);
}

TEST(AWarmupPlan, NamesWhatItCannotReachAndWhy)
{
    module_load user_type = generic("s1", {"float32"});
    user_type.snapshot->kernels.front().types = nlohmann::json::array({{{"type", "Particle"}}});
    const warmup_plan p = plan_warmup(
        run_of({defined("pkg.f", "f1", "pkg.f", "make.<locals>.k"), user_type, defined("pkg.b", "b1", "pkg.b")}), {});
    EXPECT_EQ(p.covered, 1);
    EXPECT_EQ(p.uncovered, 2);
    EXPECT_NE(target(p, "f1").why_not.find("factory or closure"), std::string::npos);
    EXPECT_NE(target(p, "s1").why_not.find("neither Warp's nor a @wp.struct"), std::string::npos) << target(p, "s1").why_not;
    EXPECT_TRUE(target(p, "f1").import_from.empty());
    EXPECT_DOUBLE_EQ(p.covered_ms, target(p, "b1").build_ms);
}

TEST(AWarmupPlan, BuildsScriptKernelsFromTheScriptButNotWithoutOne)
{
    EXPECT_TRUE(target(plan_warmup(run_of({defined("__main__", "m1", "__main__")}), {}), "m1").covered);
    const warmup_plan none = plan_warmup(run_of({defined("__main__", "m1", "__main__")}, ""), {});
    EXPECT_FALSE(target(none, "m1").covered);
    EXPECT_NE(target(none, "m1").why_not.find("no script"), std::string::npos);
}

TEST(AWarmupPlan, CoversNothingWhenTheProgramNeverReadsTheCache)
{
    report r = run_of({defined("pkg.a", "a1", "pkg.a")});
    config_set_event off;
    off.key = "cache_kernels";
    off.new_value = false;
    off.seq = 0;
    r.samples[0].cold.processes[0].config_sets.push_back(off);
    const warmup_plan p = plan_warmup(r, {});
    EXPECT_EQ(p.covered, 0);
    EXPECT_NE(target(p, "a1").why_not.find("CS-2"), std::string::npos);
}

TEST(AWarmupPlan, RefusesARunWithoutAGoodSampleOrABuild)
{
    report r = run_of({});
    EXPECT_THROW(plan_warmup(r, {}), std::invalid_argument);
    r.samples[0].cold.exit_code = 3;
    EXPECT_THROW(plan_warmup(r, {}), std::invalid_argument);
}

TEST(AWarmupFile, EscapesEveryTextFromTheReportAndKeepsItWhole)
{
    report r = run_of({defined("pkg.a", "a1", "pkg.a\"\n)\nimport os  #", "k\u202e")});
    r.command = {"python3", "app.py\n\"\"\"\nos.system('x')\u202e"};
    const warmup_plan p = plan_warmup(r, device_request("cuda:1\""), "run\nos.system('y')");
    const std::string file = render_warmup_plan(p);
    for (unsigned char c : file)
    {
        EXPECT_LT(c, 0x80) << "a byte outside ASCII reached the plan";
    }
    // data only, and the same data: what the runtime reads back is what the plan holds
    const nlohmann::json back = nlohmann::json::parse(file);
    EXPECT_EQ(back, warmup_plan_document(p));
    EXPECT_EQ(back["device"], "cuda:1\"");
    EXPECT_EQ(back["measured"]["command"], "python3 app.py\n\"\"\"\nos.system('x')\u202e");
    EXPECT_EQ(contract_violation(contract::warmup_plan, back), "");
    // the runtime holds no text of any report: it is the same file for every plan
    const std::string runtime = warmup_runtime_text();
    EXPECT_EQ(runtime.find("os.system('x')"), std::string::npos);
    EXPECT_EQ(runtime.find("@XWARP_"), std::string::npos) << "a mark the build did not fill";
    EXPECT_NE(runtime.find("RUNTIME_VERSION = \"" XWARP_VERSION "\""), std::string::npos);
}

TEST(AWarmupFile, KeepsACharacterPastTheBasicPlaneWhole)
{
    report r = run_of({defined("__main__", "a1", "__main__")}, "");
    r.cell_code = std::string("label = \"launch \xF0\x9F\x9A\x80\"\n");  // U+1F680
    const warmup_plan plan = plan_warmup(r, {}, "cell");
    // the cell's code goes into NAME_cell.py whole; the plan holds its digest, never the code
    EXPECT_NE(plan.cell_code.find("launch \xF0\x9F\x9A\x80"), std::string::npos) << plan.cell_code;
    const nlohmann::json back = nlohmann::json::parse(render_warmup_plan(plan));
    EXPECT_EQ(back["cell"].get<std::string>(), sha256_hex(plan.cell_code));
    EXPECT_FALSE(back.contains("entry_source"));
    EXPECT_EQ(render_warmup_plan(plan).find("launch"), std::string::npos);
}

TEST(AWarmupFile, ThePlanIsBesideTheRuntimeWhereTheRuntimeLooksForIt)
{
    // the runtime reads os.path.splitext(__file__)[0] + ".json"
    EXPECT_EQ(warmup_plan_path("warp_warmup.py"), "warp_warmup.json");
    EXPECT_EQ(warmup_plan_path("/ci/build/warm.up.py"), "/ci/build/warm.up.json");
    EXPECT_EQ(warmup_plan_path("/ci/prime"), "/ci/prime.json");
    EXPECT_EQ(warmup_plan_path("/ci/.warm"), "/ci/.warm.json");
    EXPECT_EQ(warmup_plan_path("/a.b/prime"), "/a.b/prime.json");
}

namespace
{
    // A unique module whose one kernel a factory made, with the factory's recorded arguments.
    module_load factory_made(const std::string& hash, const nlohmann::json& args,
                             const std::string& factory_module = "pkg.stages")
    {
        module_load l = defined("make__locals__k_" + hash, hash, "pkg.stages", "make.<locals>.k");
        l.snapshot->kernels.front().factory = {{"module", factory_module}, {"qualname", "make"}, {"args", args}};
        return l;
    }
}

TEST(AWarmupPlan, CoversAFactoryMadeKernelWhoseArgumentsAreDataAndNamesTheRest)
{
    using nlohmann::json;
    const json plain = json::array({json::array({"gain", "pos", {{"float", "2.0"}}}),
                                    json::array({"dtype", "kw", {{"ref", "warp:float32"}}}),
                                    json::array({"dims", "pos", {{"tuple", json::array({{{"lit", 3}}, {{"lit", nullptr}}})}}}),
                                    json::array({"filter", "pos", {{"enum", "pkg.types:Filter"}, {"value", 5}}})});
    const json object = json::array({json::array({"model", "pos", {{"object", "Model"}}})});
    const json foreign = json::array({json::array({"cmd", "pos", {{"enum", "os:system"}, {"value", 1}}})});
    report r = run_of({factory_made("a1", plain), factory_made("b2", object), factory_made("c3", foreign),
                       factory_made("d4", plain, "os")});
    const warmup_plan p = plan_warmup(r, {}, "pkg");
    EXPECT_TRUE(target(p, "a1").covered) << target(p, "a1").why_not;
    EXPECT_EQ(target(p, "a1").kernel, "");
    ASSERT_EQ(target(p, "a1").factories.size(), 1u);
    EXPECT_EQ(target(p, "a1").factories[0]["qualname"], "make");
    EXPECT_FALSE(target(p, "b2").covered);
    EXPECT_NE(target(p, "b2").why_not.find("argument model is a Model object"), std::string::npos) << target(p, "b2").why_not;
    EXPECT_FALSE(target(p, "c3").covered);
    EXPECT_NE(target(p, "c3").why_not.find("outside Warp and the factory's package"), std::string::npos);
    EXPECT_FALSE(target(p, "d4").covered);  // a factory that is not the kernel's own enclosing function
    EXPECT_NE(target(p, "d4").why_not.find("cannot call by name"), std::string::npos) << target(p, "d4").why_not;
    const std::string file = render_warmup_plan(p);
    EXPECT_NE(file.find(R"({"args":[["gain","pos",{"float":"2.0"}],["dtype","kw",{"ref":"warp:float32"}])"),
              std::string::npos);
    EXPECT_EQ(file.find("os:system"), std::string::npos);
}

TEST(AWarmupPlan, CoversTheSixCudaModulesOfARecordedH200Run)
{
    // recorded on the H200 under the contract that carries each kernel's qualname and module
    report r = load_recorded_run(std::string(XWARP_FIXTURES_DIR) + "/streams/gpu_serial-warp1.19.0");
    analyze(r);
    const warmup_plan p = plan_warmup(r, workers_arch_request(16, {80}), "gpu_serial");
    EXPECT_EQ(p.covered, 6);
    EXPECT_EQ(p.uncovered, 0);
    for (const auto& t : p.targets)
    {
        EXPECT_EQ(t.device, "cuda:0");
        EXPECT_EQ(t.import_from, "__main__");  // named modules, defined in the command's script
    }
    EXPECT_EQ(p.entry_script, "serial.py");
    const nlohmann::json file = nlohmann::json::parse(render_warmup_plan(p));
    EXPECT_EQ(file["arch"], nlohmann::json::array({80}));
    EXPECT_EQ(file["workers"], 16);
}

namespace
{
    // A load of pkg.m holding the given kernels: plain ones by name (defined at import), generic
    // instances as "name(dtype)"; each plain kernel's content is "h" + its name unless given.
    module_load form(const std::string& hash, const std::vector<kernel_entry>& kernels,
                     const std::vector<std::pair<std::string, std::string>>& functions = {}, int pid = 1)
    {
        module_load l = load("pkg.m", hash, 100.0);
        l.pid = pid;
        l.snapshot->kernels = kernels;
        for (auto& k : l.snapshot->kernels)
        {
            k.defined_in = "pkg.m";
            if (k.qualname.empty())
            {
                k.qualname = k.key;
            }
        }
        for (const auto& [key, h] : functions)
        {
            l.snapshot->functions[key] = h;
        }
        return l;
    }

    kernel_entry plain(const std::string& key, const std::string& content = "")
    {
        return {key, content.empty() ? "h" + key : content, "", false};
    }

    kernel_entry instance(const std::string& key, const std::string& dtype)
    {
        return {key, "h" + dtype, "a: " + dtype, true,
                nlohmann::json::array({{{"array", "array"}, {"dtype", {{"type", dtype}}}, {"ndim", 1}}})};
    }

    kernel_entry made(const std::string& key)
    {
        kernel_entry k = plain(key);
        k.qualname = "make.<locals>." + key;
        k.factory = {{"module", "pkg.m"}, {"qualname", "make"}, {"args", nlohmann::json::array()}};
        return k;
    }
}

TEST(AWarmupPlan, BuildsEveryFormOfAModuleAndSaysWhichFormsAWorkerMayHaveBuiltBefore)
{
    // Warp's own test modules: import-time kernels first, then instances and a factory's kernel
    // added test by test, and the functions the new instance calls
    const warmup_plan p = plan_warmup(
        run_of({form("f1", {plain("a"), instance("g", "float32")}),
                form("f2", {plain("a"), instance("g", "float32"), instance("g", "float64")}, {{"norm", "n1"}}),
                form("f3", {plain("a"), instance("g", "float32"), instance("g", "float64"), made("k")}, {{"norm", "n1"}})}),
        {});
    EXPECT_EQ(p.covered, 3) << target(p, "f1").why_not << target(p, "f2").why_not;
    EXPECT_EQ(target(p, "f1").stage, 1);
    EXPECT_EQ(target(p, "f2").stage, 2);
    EXPECT_EQ(target(p, "f3").stage, 3);
    EXPECT_EQ(target(p, "f1").follows, std::vector<int>{});
    EXPECT_EQ(target(p, "f3").follows, (std::vector<int>{1, 2}));
    EXPECT_TRUE(target(p, "f1").factories.empty());  // the factory runs for the form that holds its kernel
    EXPECT_EQ(target(p, "f3").factories.size(), 1u);

    // two xdist workers built the generic module from other instances: a process that built one
    // form cannot build the other (registering float64 on float32 gives a third), a fresh one can
    const warmup_plan workers = plan_warmup(
        run_of({form("w1", {plain("a"), instance("g", "float32")}, {}, 1),
                form("w2", {plain("a"), instance("g", "float64")}, {}, 2)}),
        {});
    EXPECT_EQ(workers.covered, 2);
    EXPECT_EQ(target(workers, "w2").stage, 2);
    EXPECT_TRUE(target(workers, "w2").follows.empty());
    const std::string file = render_warmup_plan(workers);
    EXPECT_NE(file.find("\"follows\":[],\"form\":2"), std::string::npos) << file.substr(file.find("\"targets\""), 1500);
}

TEST(AWarmupPlan, RefusesAFormImportingCannotGiveAnyMore)
{
    // a kernel defined at import that joined after the first load (a script that launches between
    // two definitions): importing gives both at once
    const warmup_plan joined = plan_warmup(run_of({form("j1", {plain("a")}), form("j2", {plain("a"), plain("b")})}), {});
    EXPECT_FALSE(target(joined, "j1").covered);
    EXPECT_NE(target(joined, "j1").why_not.find("kernel b, defined when its module is imported, joined it only after this load"),
              std::string::npos)
        << target(joined, "j1").why_not;
    EXPECT_TRUE(target(joined, "j2").covered);
    EXPECT_EQ(target(joined, "j2").stage, 1);

    // a kernel and a function whose content changed after the first load: importing gives only the new
    const warmup_plan changed = plan_warmup(
        run_of({form("c1", {plain("a", "v1")}), form("c2", {plain("a", "v2")}), form("d1", {plain("a", "v2")}, {{"helper", "v1"}}),
                form("d2", {plain("a", "v2"), made("k")}, {{"helper", "v2"}})}),
        {});
    EXPECT_NE(target(changed, "c1").why_not.find("kernel a changed after this load"), std::string::npos)
        << target(changed, "c1").why_not;
    EXPECT_NE(target(changed, "d1").why_not.find("function helper changed after this load"), std::string::npos)
        << target(changed, "d1").why_not;
    EXPECT_TRUE(target(changed, "c2").covered);
    EXPECT_TRUE(target(changed, "d2").covered);
}

TEST(AWarmupPlan, NamesAStructOfTheKernelsOwnPackageAndAnUnnamedVectorShape)
{
    using nlohmann::json;
    const json particle = {{"type", "Particle"}, {"struct", "pkg.types:Particle"}};
    module_load own = generic("s1", {"float32"});
    own.snapshot->kernels.front().types = json::array({particle, {{"array", "array"}, {"dtype", particle}, {"ndim", 1}}});
    module_load foreign = generic("s2", {"float64"});
    foreign.snapshot->kernels.front().types = json::array({{{"type", "Foo"}, {"struct", "os:Foo"}}});
    module_load local = generic("s3", {"int32"});
    local.snapshot->kernels.front().types = json::array({{{"type", "Foo"}, {"struct", "pkg.ops:make.<locals>.Foo"}}});
    module_load vector = generic("s4", {"uint8"});
    vector.snapshot->kernels.front().types =
        json::array({{{"type", "vec_t"}, {"shape", {5}}, {"scalar", {{"type", "float32"}}}},
                     {{"type", "mat_t"}, {"shape", {5, 5}}, {"scalar", {{"type", "float64"}}}}});
    module_load unnamed = generic("s5", {"int8"});
    unnamed.snapshot->kernels.front().types = json::array({{{"type", "vec_t"}}});  // recorded before shapes were
    const warmup_plan p = plan_warmup(run_of({own, foreign, local, vector, unnamed}), {});
    ASSERT_TRUE(target(p, "s4").covered) << target(p, "s4").why_not;
    EXPECT_EQ(target(p, "s4").overloads[0].types,
              json::parse(R"([{"shape": [5], "scalar": {"type": "float32"}}, {"shape": [5, 5], "scalar": {"type": "float64"}}])"));
    EXPECT_FALSE(target(p, "s5").covered);  // never wp.vec_t: the file would not load
    ASSERT_TRUE(target(p, "s1").covered) << target(p, "s1").why_not;
    EXPECT_EQ(target(p, "s1").overloads[0].types,
              json::parse(R"([{"struct": "pkg.types:Particle"}, {"array": "array", "dtype": {"struct": "pkg.types:Particle"}, "ndim": 1}])"));
    EXPECT_FALSE(target(p, "s2").covered);  // another package's name never reaches the file
    EXPECT_NE(target(p, "s2").why_not.find("@wp.struct of its own package"), std::string::npos) << target(p, "s2").why_not;
    EXPECT_FALSE(target(p, "s3").covered);  // a struct made inside a function has no name to import
    const std::string file = render_warmup_plan(p);
    // the types travel as data the file turns into types itself, never as code
    EXPECT_NE(file.find("{\"struct\":\"pkg.types:Particle\"}", file.find("\"targets\": [")), std::string::npos);
    EXPECT_EQ(file.find("os:Foo", file.find("\"targets\": [")), std::string::npos);  // named in not_built above, never as data
}

TEST(AWarmupFile, WritesTargetsAsRecordsOfItsContractAndTheContractRefusesAColumnThatDrifted)
{
    const nlohmann::json args = nlohmann::json::array({nlohmann::json::array({"gain", "pos", {{"float", "2.0"}}})});
    const warmup_plan p = plan_warmup(run_of({factory_made("f1", args), generic("g1", {"float32"}), defined("pkg.a", "a1", "pkg.a")}), {});
    nlohmann::json plan = warmup_plan_document(p);
    nlohmann::json& records = plan["targets"];
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(contract_violation(contract::warmup_plan, plan), "");
    records[0]["form_number"] = 1;  // a field the file does not read
    EXPECT_NE(contract_violation(contract::warmup_plan, plan), "");
    records[0].erase("form_number");
    records[0]["instances"] = nlohmann::json::array({{{"kernel", "g"}, {"module", ""}, {"key", "g"}, {"types", {"wp.float32"}}}});
    EXPECT_NE(contract_violation(contract::warmup_plan, plan), "") << "a type as code, not data";
    records[0].erase("instances");
    plan = warmup_plan_document(p);
    plan["config_rules"] = nlohmann::json::object();  // the rules are the runtime's, never the plan's
    EXPECT_NE(contract_violation(contract::warmup_plan, plan), "");
}

TEST(AWarmupFile, ResultsAreReadBackOnlyInsideTheirContract)
{
    const nlohmann::json outcome = {{"target", 0},      {"warp_module", "wpkg.reduce"}, {"hash", "abcdef0123"},
                                    {"device", "cpu"},  {"block_dim", 1},              {"built", true},
                                    {"built_hash", "abcdef0123"}, {"error", nullptr}, {"notes", nlohmann::json::array()},
                                    {"seconds", 1.5}};
    nlohmann::json results = {{"contract", warmup_plan_version()}, {"built", {0}}, {"other", nlohmann::json::array()},
                              {"failed", nlohmann::json::array()}, {"in_cache", nlohmann::json::array()},
                              {"unknown", nlohmann::json::array()},
                              {"would_build", nlohmann::json::array()}, {"outcomes", {outcome}}, {"wall_s", 2.0},
                              {"workers", 1}, {"root", "/p"}, {"cache", "/c"}, {"mode", "build"}, {"cuda_cache", nullptr}};
    EXPECT_EQ(contract_violation(contract::warmup_results, results), "");
    results["failed"] = {{0, "ImportError: no module"}};
    EXPECT_EQ(contract_violation(contract::warmup_results, results), "");
    results["outcomes"][0]["built"] = "yes";  // a word where the file writes a boolean
    EXPECT_NE(contract_violation(contract::warmup_results, results), "");
    results["outcomes"][0]["built"] = true;
    results["mode"] = "rebuild";  // a mode the file has not
    EXPECT_NE(contract_violation(contract::warmup_results, results), "");
    results["mode"] = "missing";
    results["extra"] = 1;  // a field nobody reads
    EXPECT_NE(contract_violation(contract::warmup_results, results), "");
}
