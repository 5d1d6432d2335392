#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "builders.hpp"
#include "xwarp/analysis/analyze.hpp"
#include "xwarp/analysis/summarize.hpp"
#include "xwarp/model/json_io.hpp"

using namespace xwarp;
using namespace xwarp::testing;

namespace
{
    report sample_report()
    {
        report r;
        r.created_utc = "2026-12-02T12:00:00Z";
        r.label = "late <kernel> & \"friends\"";
        r.command = {"python", "app.py", "--flag=é"};
        r.cwd = "/tmp/p";
        r.run_settings.samples = 2;
        r.run_settings.timeout_s = 30.0;
        r.env.warp_version = "1.19.0";
        r.env.gpus.push_back({0, "H200", "9.0", 1 << 30});
        auto cold = pass(4000, {load("m", "aaa", 3000), load("m", "bbb", 300)});
        cold.processes[0].dirty_events.push_back({"m", "kernel", {{"kernel", "k2"}}, "/tmp/p/app.py", 8, 5, 1.5});
        auto warm = pass(600, {load("m", "aaa", 3, load_status::cached), load("m", "bbb", 1, load_status::cached)});
        r.samples.push_back(make_sample(1, cold, warm));
        run_result failed;
        failed.wall_ms = 10;
        failed.exit_code = 1;
        failed.stderr_tail = std::string("bad byte \xff here\n");
        sample s2;
        s2.index = 2;
        s2.cold = failed;
        r.samples.push_back(s2);
        analyze(r);
        return r;
    }
}

TEST(JsonRoundTrip, ReportSurvivesSaveAndLoad)
{
    report r = sample_report();
    nlohmann::json j = report_to_json(r);
    std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    report back = report_from_text(text);
    nlohmann::json j2 = report_to_json(back);
    // Invalid UTF-8 from a child's output is replaced on the way out; everything else is equal.
    EXPECT_EQ(j2.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
              nlohmann::json::parse(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    EXPECT_EQ(back.label, r.label);
    EXPECT_EQ(back.samples.size(), 2u);
    EXPECT_FALSE(back.samples[1].warm.has_value());
    ASSERT_EQ(back.samples[0].cold.processes[0].dirty_events.size(), 1u);
    EXPECT_EQ(*back.samples[0].cold.processes[0].dirty_events[0].line, 8);
    EXPECT_EQ(back.result.identities.size(), r.result.identities.size());
    EXPECT_EQ(*back.run_settings.timeout_s, 30.0);
    EXPECT_EQ(back.env.gpus[0].name, "H200");
}

// The history stores and digests the report as report_json_text writes it, record by record;
// it must be byte for byte what dumping the whole tree gives (or a run stored before would not
// be found again by its digest). The sample report has a failed sample without a warm pass and
// invalid UTF-8; the GPU fixture has every kind of record a real run writes.
TEST(JsonRoundTrip, TheRecordByRecordTextIsTheWholeTreesDump)
{
    for (const int indent : {-1, 2})
    {
        const auto whole = [indent](const report& r)
        { return report_to_json(r).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace); };
        const report made = sample_report();
        EXPECT_EQ(report_json_text(made, indent), whole(made));
        report gpu = load_report(std::string(XWARP_FIXTURES_DIR) + "/gpu-nvrtc-trace-report.json");
        ASSERT_FALSE(gpu.samples.empty());
        EXPECT_EQ(report_json_text(gpu, indent), whole(gpu));
        analyze(gpu);
        EXPECT_EQ(report_json_text(gpu, indent), whole(gpu));
        EXPECT_EQ(report_json_text(report{}, indent), whole(report{}));
    }
}

// A finding's cause is written from its compact text, re-indented as it is copied: the same
// text as dumping its tree, whatever the cause holds (empty and nested containers, and strings
// holding quotes, backslashes and the characters that structure JSON).
TEST(JsonRoundTrip, ACausesTextIsWrittenAsItsTreeWouldBe)
{
    report r = sample_report();
    finding f;
    f.mechanism = "CS-1";
    f.cause = json_text(nlohmann::json{
        {"empty", nlohmann::json::object()},
        {"none", nlohmann::json::array()},
        {"nested", {{{"a", {1, -2.5, 1e300, nullptr, true, false}}, {"b", nlohmann::json::array({nlohmann::json::array()})}},
                    nlohmann::json::object()}},
        {"texts", {"{[,:]}", "quote \" inside", "ends in a backslash \\", "\\\"", "tab\tnew\nline", "\u00e9\u202e",
                   std::string("nul\0byte", 8), "\x1b[2J"}},
        {"key: with, {marks}", "x"}});
    r.findings = {f, finding{}};
    for (const int indent : {-1, 0, 2, 4})
    {
        const std::string whole = report_to_json(r).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
        EXPECT_EQ(report_json_text(r, indent), whole) << "indent " << indent;
        std::ostringstream streamed;
        write_report_json(streamed, r, indent);
        EXPECT_EQ(streamed.str(), whole) << "indent " << indent;
    }
}

// Files get the same text streamed a block at a time (report --format json, --json): the GPU
// report is several blocks long, so the text is cut mid-array more than once.
TEST(JsonRoundTrip, TheStreamedTextIsTheSameText)
{
    report gpu = load_report(std::string(XWARP_FIXTURES_DIR) + "/gpu-nvrtc-trace-report.json");
    ASSERT_FALSE(gpu.samples.empty());
    for (int i = 2; i <= 6; ++i)  // as if it had run six samples: several blocks of text
    {
        gpu.samples.push_back(gpu.samples.front());
        gpu.samples.back().index = i;
    }
    analyze(gpu);
    // a finding larger than a block (a cause listing thousands of modules) is written straight
    // to the stream, its lines shifted to its depth there
    finding big;
    big.mechanism = "CS-4";
    nlohmann::json modules = nlohmann::json::array();
    for (int m = 0; m < 8000; ++m)
    {
        modules.push_back("pkg.module_" + std::to_string(m));
    }
    big.cause = json_text(nlohmann::json{{"modules", modules}});
    gpu.findings.push_back(big);
    for (const int indent : {-1, 2})
    {
        std::ostringstream streamed;
        write_report_json(streamed, gpu, indent);
        ASSERT_GT(streamed.str().size(), 3u * 65536u);
        EXPECT_EQ(streamed.str(), report_json_text(gpu, indent));
    }
    const auto dir = std::filesystem::temp_directory_path() / ("xwarp-save-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    save_report_json((dir / "r.json").string(), gpu);
    std::ifstream in(dir / "r.json", std::ios::binary);
    const std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(saved, report_json_text(gpu, 2) + "\n");
    std::filesystem::remove_all(dir);
}

// A write that fails or throws half way leaves the file it was to replace as it was, and
// nothing beside it.
TEST(JsonRoundTrip, AFailedSaveLeavesTheOldFileAndNothingBesideIt)
{
    const auto dir = std::filesystem::temp_directory_path() / ("xwarp-saved-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "out.html").string();
    save_streamed(path, [](std::ostream& out) { out << "the old page"; });
    EXPECT_THROW(save_streamed(path,
                               [](std::ostream& out)
                               {
                                   out << std::string(200000, 'x');
                                   throw std::runtime_error("the renderer failed");
                               }),
                 std::runtime_error);
    std::ifstream in(path, std::ios::binary);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), "the old page");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
    EXPECT_THROW(save_streamed((dir / "no-such-dir" / "x.json").string(), [](std::ostream&) {}), std::runtime_error);
    // what is not a regular file (/dev/stdout, /dev/null, a pipe) is refused, neither written
    // through nor replaced by a file renamed over it (as root that replaced /dev/stdout): a pipe
    // here, with a reader waiting on it, gets nothing and stays a pipe
    const auto pipe = dir / "pipe";
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
    const int reading = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reading, 0);
    EXPECT_THROW(save_streamed(pipe.string(), [](std::ostream& out) { out << "through the pipe"; }), std::runtime_error);
    char got[64] = {};
    const auto n = ::read(reading, got, sizeof got - 1);
    ::close(reading);
    EXPECT_LE(n, 0);
    EXPECT_TRUE(std::filesystem::is_fifo(pipe));
    EXPECT_NE(output_path_refused("/dev/null").find("a device"), std::string::npos);
    EXPECT_NE(output_path_refused(pipe.string()).find("a FIFO"), std::string::npos);
    EXPECT_EQ(output_path_refused((dir / "new.json").string()), "");
    std::filesystem::remove_all(dir);
}

TEST(JsonRoundTrip, RejectsOtherSchemaVersion)
{
    nlohmann::json j = report_to_json(sample_report());
    j["schema_version"] = 99;
    try
    {
        report_from_json(j);
        FAIL() << "accepted schema_version 99";
    }
    catch (const report_error& e)
    {
        EXPECT_EQ(e.which(), report_error::kind::schema_version);
        EXPECT_NE(std::string(e.what()).find("99"), std::string::npos);
    }
}

TEST(JsonRoundTrip, RejectsNotJsonAndWrongShape)
{
    EXPECT_THROW(report_from_text("{not json"), report_error);
    EXPECT_THROW(report_from_text("[1,2,3]"), report_error);
    EXPECT_THROW(report_from_text("{\"hello\": 1}"), report_error);
    nlohmann::json j = report_to_json(sample_report());
    j["samples"][0]["cold"]["wall_ms"] = "fast";
    try
    {
        report_from_json(j);
        FAIL() << "accepted a string wall_ms";
    }
    catch (const report_error& e)
    {
        EXPECT_EQ(e.which(), report_error::kind::shape);
        EXPECT_EQ(std::string(e.what()).find("[json.exception"), std::string::npos);
    }
}

TEST(JsonRoundTrip, MissingFile)
{
    try
    {
        load_report("/nonexistent/report.json");
        FAIL();
    }
    catch (const report_error& e)
    {
        EXPECT_EQ(e.which(), report_error::kind::missing);
    }
}

// Equal option sets read for different loads share one value; a different set does not.
TEST(JsonRoundTrip, EqualModuleOptionsAreHeldOnce)
{
    const shared_options a(nlohmann::json{{"block_dim", 256}, {"enable_backward", false}});
    const shared_options b(nlohmann::json{{"enable_backward", false}, {"block_dim", 256}});
    const shared_options c(nlohmann::json{{"block_dim", 128}, {"enable_backward", false}});
    EXPECT_EQ(&*a, &*b);
    EXPECT_NE(&*a, &*c);
    EXPECT_EQ((*c)["block_dim"], 128);
    EXPECT_TRUE(shared_options()->is_object() && shared_options()->empty());

    report r = sample_report();
    const report back = report_from_text(report_json_text(r));
    const auto& loads = back.samples[0].cold.module_loads;
    ASSERT_GE(loads.size(), 2u);
    ASSERT_TRUE(loads[0].snapshot && loads[1].snapshot);
    EXPECT_EQ(*loads[0].snapshot->options, *loads[1].snapshot->options);
    EXPECT_EQ(&*loads[0].snapshot->options, &*loads[1].snapshot->options);
}

// A module's name is held once by what the reader reads (its loads, its launches in both
// passes) and by what the summary makes of its loads: past the small-string limit, each record
// held a copy, most of a large report's memory after the records themselves.
TEST(JsonRoundTrip, AModulesNameIsHeldOnceByTheReaderAndTheSummary)
{
    const std::string name = "package.subpackage.kernels_of_a_long_module_name";
    std::vector<module_load> loads{load(name, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 10)};
    // more modules between than a recent-text memory would span, and than the reader's table
    // of names holds before it grows (several times)
    const int others = 300;
    for (int i = 0; i < others; ++i)
    {
        loads.push_back(load("package.other_module_number_" + std::to_string(i), "b" + std::to_string(i), 10));
    }
    loads.push_back(load(name, "cccccccccccccccccccccccccccccccccccccccc", 10));
    report r;
    r.samples.push_back(make_sample(1, pass(500, loads), pass(100, {})));
    for (auto* run : {&r.samples[0].cold, &*r.samples[0].warm})
    {
        run->launches[0].module = name;
        run->launches[0].dtypes = std::vector<shared_text>{"array[float32,1]", "int32"};
    }
    report back = report_from_text(report_json_text(r));
    const auto& cold = back.samples[0].cold;
    const std::string* held = &cold.module_loads.front().module.str();
    EXPECT_EQ(*held, name);
    EXPECT_EQ(&cold.module_loads.back().module.str(), held);
    EXPECT_EQ(&cold.launches.at(0).module.str(), held);
    EXPECT_EQ(&back.samples[0].warm->launches.at(0).module.str(), held);
    ASSERT_EQ(cold.module_loads.size(), static_cast<std::size_t>(others + 2));
    for (int i = 0; i < others; ++i)
    {
        EXPECT_EQ(cold.module_loads[static_cast<std::size_t>(i) + 1].module, "package.other_module_number_" + std::to_string(i));
    }
    // and the launches' argument types, one list for both
    EXPECT_EQ(cold.launches.at(0).dtypes.size(), 2u);
    EXPECT_EQ(&cold.launches.at(0).dtypes.items(), &back.samples[0].warm->launches.at(0).dtypes.items());
    summarize(back);
    for (const auto& id : back.result.identities)
    {
        if (id.module == name)
        {
            EXPECT_EQ(&id.module.str(), held);
        }
    }
    ASSERT_FALSE(back.result.rebuilt.empty());
    EXPECT_EQ(&back.result.rebuilt.front().module.str(), held);
    EXPECT_EQ(&back.result.launch_kernels.at(0).module.str(), held);
}

namespace
{
    // Every value in a record, each replaced in turn by a value of every JSON type.
    void each_retyped(const nlohmann::json& record, const std::function<void(const nlohmann::json&)>& visit)
    {
        static const std::vector<nlohmann::json> replacements{
            nullptr, true, 0, -1, 7, 2.5, "x", nlohmann::json::array(), nlohmann::json::object(),
            nlohmann::json::array({"x"}), nlohmann::json::array({1}), nlohmann::json{{"x", 1}}};
        const nlohmann::json flat = record.flatten();
        for (const auto& [pointer, value] : flat.items())
        {
            // the pointer itself and each object or array above it
            for (std::string path = pointer; !path.empty(); path = path.substr(0, path.rfind('/')))
            {
                for (const auto& replacement : replacements)
                {
                    nlohmann::json retyped = record;
                    retyped[nlohmann::json::json_pointer(path)] = replacement;
                    visit(retyped);
                }
            }
        }
    }
    // Every module load and launch run of the real GPU fixture.
    void each_fixture_record(const std::function<void(const nlohmann::json&, record_kind)>& visit)
    {
        std::ifstream in(std::string(XWARP_FIXTURES_DIR) + "/gpu-nvrtc-trace-report.json");
        const nlohmann::json fixture = nlohmann::json::parse(in);
        for (const auto& smp : fixture.at("samples"))
        {
            for (const char* pass_name : {"cold", "warm"})
            {
                if (!smp.contains(pass_name) || smp[pass_name].is_null())
                {
                    continue;
                }
                for (const auto& [member, kind] : {std::make_pair("module_loads", record_kind::module_load),
                                                   std::make_pair("launches", record_kind::launch)})
                {
                    for (const auto& record : smp[pass_name].value(member, nlohmann::json::array()))
                    {
                        visit(record, kind);
                    }
                }
            }
        }
    }
}

// The quick pass skips valijson only for records valijson accepts: tried on every record of a
// real GPU run (loads with snapshots, LTO artifacts, launch runs) with each of its values retyped
// every way. It must also accept the real records as they are, or it saves nothing.
TEST(JsonRoundTrip, TheQuickRecordCheckNeverAcceptsWhatTheSchemaRefuses)
{
    int records = 0;
    int tried = 0;
    int refused = 0;
    each_fixture_record([&](const nlohmann::json& record, record_kind kind) {
        ++records;
        EXPECT_TRUE(record_types_pass_quickly(record, kind)) << record.dump();
        each_retyped(record, [&](const nlohmann::json& retyped) {
            ++tried;
            bool schema_accepts = true;
            try
            {
                check_record_types_by_schema(retyped, kind, "/r");
            }
            catch (const report_error&)
            {
                schema_accepts = false;
                ++refused;
            }
            if (record_types_pass_quickly(retyped, kind))
            {
                EXPECT_TRUE(schema_accepts) << retyped.dump();
            }
        });
    });
    EXPECT_GE(records, 4);
    EXPECT_GT(refused, tried / 4);  // the retyping reaches typed fields, not only free ones
}

namespace
{
    // A report holding one record in its first sample's cold pass.
    std::string report_around(const nlohmann::json& record, record_kind kind)
    {
        nlohmann::json pass = {{"wall_ms", 1.0}};
        pass[kind == record_kind::module_load ? "module_loads" : "launches"] = nlohmann::json::array({record});
        return nlohmann::json{{"schema_version", report_schema_version}, {"tool", "warp-probe"},
                              {"samples", {{{"index", 1}, {"cold", pass}}}}}
            .dump();
    }

    // Reads `text` both ways: the direct reading must give up or give what the checked one gives.
    // Returns whether it read directly.
    bool read_alike(const std::string& text)
    {
        std::optional<report> direct;
        try
        {
            direct = report_from_text(text, record_reading::direct);
        }
        catch (const report_error& e)
        {
            ADD_FAILURE() << "the direct reading threw on a record (" << e.what() << "): " << text;
            return false;
        }
        if (!direct)
        {
            return false;
        }
        try
        {
            const std::optional<report> checked = report_from_text(text, record_reading::checked);
            EXPECT_TRUE(checked.has_value());
            if (checked)
            {
                EXPECT_EQ(report_json_text(*direct), report_json_text(*checked)) << text;
            }
        }
        catch (const report_error& e)
        {
            ADD_FAILURE() << "read directly what the checked reading refuses (" << e.what() << "): " << text;
        }
        return true;
    }
}

// Records are read straight from the parser's events, and read again through the schema check
// when that gives up. The two must agree: on every record of a real GPU run (snapshots, LTO
// artifacts, phases, launch runs) with each value retyped every way, the direct reading either
// gives up or gives the same report as the checked one, and never accepts what the check
// refuses. It must read the real records as they are (else every report is read twice), and
// skip a field it does not know as the check does.
TEST(JsonRoundTrip, TheDirectRecordReadingAgreesWithTheCheckedOne)
{
    int records = 0;
    int tried = 0;
    int read_directly = 0;
    each_fixture_record([&](const nlohmann::json& record, record_kind kind) {
        ++records;
        EXPECT_TRUE(read_alike(report_around(record, kind))) << record.dump();
        nlohmann::json extra = record;
        extra["added_by_a_later_version"] = {{"nested", {1, {{"x", nullptr}}, "y"}}};
        EXPECT_TRUE(read_alike(report_around(extra, kind))) << extra.dump();
        each_retyped(record, [&](const nlohmann::json& retyped) {
            ++tried;
            read_directly += read_alike(report_around(retyped, kind)) ? 1 : 0;
        });
    });
    EXPECT_GE(records, 4);
    // the retyping reaches fields either way: some values stay valid, most do not
    EXPECT_GT(read_directly, tried / 20);
    EXPECT_LT(read_directly, tried / 2);
}

// A key twice in one object is refused, read either way, with where it is: which of the two
// values counts is not JSON's to say, and a reader that kept the last would let a report say one
// thing to one tool and another to the next. A later version's field, met once, is still skipped.
TEST(JsonRoundTrip, AKeyTwiceInOneObjectIsRefusedWithWhereItIs)
{
    const std::string head = R"({"schema_version":2,"tool":"warp-probe","samples":[{"index":1,"cold":{"wall_ms":1,"module_loads":[)";
    const std::vector<std::pair<std::string, std::string>> cases{
        {R"({"module":"a","hash":"1","module":"b"}]}}]})", "/samples/0/cold/module_loads/0"},
        {R"({"module":"a","later":1,"later":2}]}}]})", "/samples/0/cold/module_loads/0"},
        {R"({"module":"a","snapshot":{"kernels":[{"key":"k1","key":"k2"}]}}]}}]})", "/samples/0/cold/module_loads/0"},
        {R"({"module":"a","snapshot":{"options":{"x":1,"x":2}}}]}}]})", "/samples/0/cold/module_loads/0"},
        {R"({"module":"a","snapshot":{"functions":{"f":"1","f":"2"}}}]}}]})", "/samples/0/cold/module_loads/0"},
    };
    for (const auto& [tail, where] : cases)
    {
        for (auto how : {record_reading::direct, record_reading::checked})
        {
            try
            {
                const auto r = report_from_text(head + tail, how);
                EXPECT_FALSE(r.has_value() && how == record_reading::checked) << "accepted: " << tail;
            }
            catch (const report_error& e)
            {
                EXPECT_EQ(e.which(), report_error::kind::shape);
                EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
                EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
            }
        }
        EXPECT_THROW(report_from_text(head + tail), report_error) << tail;
    }
    EXPECT_THROW(report_from_text(R"({"schema_version":2,"schema_version":2,"tool":"warp-probe","samples":[]})"), report_error);
}

// A text that is not JSON says where and why: a NaN literal (Python's json.dumps writes them) is
// named with its line and column.
TEST(JsonRoundTrip, NotJsonSaysWhereAndWhy)
{
    try
    {
        report_from_text("{\"schema_version\": 2,\n \"wall_ms\": NaN}");
        FAIL() << "accepted NaN";
    }
    catch (const report_error& e)
    {
        EXPECT_EQ(e.which(), report_error::kind::not_json);
        const std::string what = e.what();
        EXPECT_NE(what.find("line 2"), std::string::npos) << what;
        EXPECT_NE(what.find("NaN"), std::string::npos) << what;
        EXPECT_EQ(what.find("[json.exception"), std::string::npos) << what;
    }
}

TEST(CompactValues, ACauseIsHeldAsTextAndReadBackWhole)
{
    EXPECT_EQ(json_text().value(), nlohmann::json::object());
    const nlohmann::json cause = {{"changes", {{{"from", "abc1234"}, {"block_dim", 256}, {"detail", {{"added", {"k2"}}}}}}},
                                  {"ms", 12.25}, {"negative", -3}, {"none", nullptr}, {"flag", true}};
    const json_text held(cause);
    EXPECT_EQ(held.value(), cause);
    EXPECT_EQ(held.text(), cause.dump());
    // text that is not UTF-8 is held as the report would write it, never thrown at the detector
    const json_text odd(nlohmann::json{{"file", "bad\xff.py"}});
    EXPECT_EQ(odd.value()["file"], "bad\xef\xbf\xbd.py");
    // through a report's JSON and back
    report r;
    finding f;
    f.cause = held;
    r.findings.push_back(f);
    const nlohmann::json j = report_to_json(r);
    EXPECT_EQ(j.at("findings").at(0).at("cause"), cause);
    EXPECT_EQ(nlohmann::json::parse(report_json_text(r, 2)), j);
    EXPECT_EQ(report_from_json(j).findings.at(0).cause.text(), held.text());
}

TEST(CompactValues, EqualTextsAreHeldOnce)
{
    const std::string advice(416, 'r');
    const shared_text a(advice), b(advice);
    EXPECT_EQ(&a.str(), &b.str());  // one copy
    const shared_text other("Preload them together");
    EXPECT_NE(&other.str(), &a.str());
    EXPECT_EQ(other, "Preload them together");
    EXPECT_EQ(a, advice);
    EXPECT_TRUE(shared_text().empty());
    EXPECT_EQ(&shared_text("").str(), &shared_text().str());
    // past the texts it remembers, an equal text is still equal (held again)
    for (int i = 0; i < 20; ++i)
    {
        shared_text filler("filler " + std::to_string(i));
    }
    EXPECT_EQ(shared_text(advice), advice);
    EXPECT_EQ(nlohmann::json(a), advice);
    EXPECT_EQ(nlohmann::json(advice).get<shared_text>(), advice);
    EXPECT_EQ("[CS-1] " + other, "[CS-1] Preload them together");
}

// A shared_text is one pointer to a text that counts its holders: copies share it, the last
// holder lets it go (the copies made on other threads count too), a moved-from one reads "".
TEST(CompactValues, ASharedTextIsOnePointerThatItsLastHolderLetsGo)
{
    EXPECT_EQ(sizeof(shared_text), sizeof(void*));
    const std::string name(40, 'm');
    std::optional<shared_text> first(std::in_place, name);
    shared_text copy = *first;
    EXPECT_EQ(&copy.str(), &first->str());
    first.reset();
    for (int i = 0; i < 20; ++i)  // past the recent memory: only the copy holds the text now
    {
        shared_text filler("filler " + std::to_string(i));
    }
    EXPECT_EQ(copy, name);
    shared_text moved = std::move(copy);
    EXPECT_EQ(moved, name);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is "" by design
    copy = moved;
    shared_text other("other");
    other = std::move(copy);  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is "" however it was moved
    copy = other;
    moved = moved;  // NOLINT: self-assignment keeps it
    moved = std::move(moved);  // NOLINT: and so does a self-move
    EXPECT_EQ(moved, name);
    EXPECT_EQ(&copy.str(), &moved.str());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
    {
        threads.emplace_back([&moved] {
            for (int i = 0; i < 20000; ++i)
            {
                shared_text held = moved;
                std::vector<shared_text> more(3, held);
                more.clear();
            }
        });
    }
    for (auto& t : threads)
    {
        t.join();
    }
    EXPECT_EQ(moved, name);
    EXPECT_EQ(copy, name);
}

// Causes listing thousands of module names are put together as text: each name must read as
// json_text would have written it, or the report's JSON would differ by how it was made.
TEST(CompactValues, NamesWrittenAsTextAreWhatTheTreeWouldDump)
{
    std::vector<std::string> names = {"", "pkg.sub0.module_0", "quote\"d", "back\\slash", "slash/ok", "tab\tnew\nline",
                                      "bell\x07" "del\x7f", "\b\f\r", "caf\xc3\xa9", "bad\xff.py", "\xe2\x82\xac"};
    for (int c = 0; c < 0x20; ++c)
    {
        names.push_back(std::string("c") + static_cast<char>(c));
    }
    std::vector<std::string_view> views(names.begin(), names.end());
    EXPECT_EQ(json_string_array(views), json_text(nlohmann::json(names)).text());
    for (const auto& n : names)
    {
        std::string one = "x";
        append_json_string(one, n);
        EXPECT_EQ(one, "x" + json_text(nlohmann::json(n)).text()) << n;
    }
    EXPECT_EQ(json_string_array({}), "[]");
}

// A kernel's hash is held inline up to 23 characters and on the heap past that; both read and
// copy as the text they hold, and a moved-from one is empty.
TEST(CompactValues, ShortTextsHoldAnyLengthWholeAndCopyAndMoveAsValues)
{
    const std::string hex16 = "0123456789abcdef";
    const std::string long_text(100, 'x');
    for (const std::string& text : {std::string(), hex16, std::string(23, 'y'), std::string(24, 'z'), long_text})
    {
        short_text held(text);
        EXPECT_EQ(std::string_view(held), text);
        short_text copy = held;
        EXPECT_EQ(copy, text);
        short_text moved = std::move(held);
        EXPECT_EQ(moved, text);
        EXPECT_TRUE(held.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by design
        copy = copy;                 // self-assignment keeps it
        EXPECT_EQ(copy, text);
        copy = short_text(std::string_view(copy).substr(text.size() / 2));  // a part of itself
        EXPECT_EQ(copy, text.substr(text.size() / 2));
        nlohmann::json j = moved;
        EXPECT_EQ(j, text);
        EXPECT_EQ(j.get<short_text>(), text);
    }
    kernel_entry k;
    k.hash = hex16;
    EXPECT_EQ("key|" + k.hash, "key|" + hex16);
}
