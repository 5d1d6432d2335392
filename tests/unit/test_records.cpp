// The shim's JSON-lines records -> the model. The fixture was recorded from a real Warp 1.19
// run of a program that defines a second kernel after the first launch (paths anonymised).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "xwarp/engine/runner/records.hpp"
#include "xwarp/engine/runner/runner.hpp"

#include <algorithm>
#include <unistd.h>

using namespace xwarp;

namespace
{
    shim_records read_fixture(const std::string& name)
    {
        std::ifstream in(std::string(XWARP_FIXTURES_DIR) + "/" + name);
        EXPECT_TRUE(in.good());
        shim_records rec;
        read_shim_stream(in, rec);
        return rec;
    }
}

TEST(Records, LateKernelFixture)
{
    auto rec = read_fixture("shim-late-kernel.jsonl");
    ASSERT_EQ(rec.processes.size(), 1u);
    const auto& p = rec.processes[0];
    EXPECT_EQ(p.warp_version, "1.19.0");
    EXPECT_TRUE(p.exited_cleanly);
    EXPECT_TRUE(p.hooks.value("module_load", false));
    EXPECT_FALSE(p.log_fallback);

    ASSERT_EQ(rec.loads.size(), 2u);
    EXPECT_EQ(rec.loads[0].module, "__main__");
    EXPECT_EQ(rec.loads[0].status, load_status::compiled);
    EXPECT_EQ(rec.loads[0].hash.size(), 64u);
    EXPECT_NE(rec.loads[0].hash, rec.loads[1].hash);
    EXPECT_EQ(rec.loads[0].pid, p.pid);
    ASSERT_TRUE(rec.loads[1].snapshot);
    EXPECT_EQ(rec.loads[1].snapshot->kernels.size(), 2u);
    EXPECT_EQ(rec.loads[1].snapshot->options->value("block_dim", 0), 1);
    ASSERT_TRUE(rec.loads[0].native_ms);
    EXPECT_GT(*rec.loads[0].native_ms, 0.0);

    ASSERT_EQ(p.dirty_events.size(), 1u);
    EXPECT_EQ(p.dirty_events[0].trigger, "kernel");
    EXPECT_EQ(p.dirty_events[0].detail.value("kernel", ""), "k2");
    EXPECT_EQ(*p.dirty_events[0].file, "/project/a.py");
    EXPECT_EQ(*p.dirty_events[0].line, 8);

    ASSERT_EQ(rec.launches.size(), 2u);
    EXPECT_EQ(rec.launches[0].kernel, "k1");
    EXPECT_EQ(rec.launches[1].kernel, "k2");
    EXPECT_EQ(rec.launches[0].block_dim, 1);
    EXPECT_EQ(rec.launch_total, 2);
}

namespace
{
    const char* const process_line =
        "{\"type\":\"process\",\"contract\":2,\"pid\":7,\"ppid\":1,\"argv\":[\"a.py\"],\"executable\":\"/py\","
        "\"python\":\"3.11.2\",\"started_unix\":1.0,\"seq\":0,\"t_ms\":0}\n";

    std::string load_line(const std::string& warp_ms)
    {
        return "{\"type\":\"load\",\"module\":\"m\",\"hash\":\"ab\",\"device\":\"cpu\",\"block_dim\":1,"
               "\"status\":\"compiled\",\"warp_ms\":" + warp_ms + ",\"total_ms\":5,\"t_start_ms\":1,"
               "\"thread\":\"MainThread\",\"seq\":1,\"t_ms\":6}\n";
    }
}

TEST(Records, MalformedLinesAreCountedNotFatal)
{
    std::istringstream in(std::string(process_line) + "not json\n[1,2]\n" + load_line("4.5")
                          + "{\"type\":\"load\",\"module\":");  // a process killed mid-write
    shim_records rec;
    read_shim_stream(in, rec);
    EXPECT_EQ(rec.malformed_lines, 3);
    ASSERT_EQ(rec.loads.size(), 1u);
    EXPECT_EQ(*rec.loads[0].warp_ms, 4.5);
    EXPECT_EQ(rec.loads[0].pid, 7);
    ASSERT_EQ(rec.processes.size(), 1u);
    EXPECT_FALSE(rec.processes[0].exited_cleanly);
    EXPECT_EQ(rec.rejected_count, 0);
}

TEST(Records, ARecordOutsideTheContractIsRejectedByName)
{
    std::istringstream in(std::string(process_line) + load_line("\"oops\"")
                          + "{\"type\":\"telemetry\",\"seq\":2,\"t_ms\":7}\n"
                          + "{\"type\":\"dirty\",\"module\":\"m\",\"trigger\":\"kernel\",\"detail\":{},\"file\":3,"
                            "\"line\":8,\"seq\":3,\"t_ms\":8}\n"
                          + load_line("2.0"));
    shim_records rec;
    read_shim_stream(in, rec);
    ASSERT_EQ(rec.loads.size(), 1u);  // the good load only: a retyped field is not guessed at
    EXPECT_EQ(*rec.loads[0].warp_ms, 2.0);
    EXPECT_TRUE(rec.processes.at(0).dirty_events.empty());
    EXPECT_EQ(rec.rejected_count, 3);
    ASSERT_EQ(rec.rejected.size(), 3u);
    EXPECT_NE(rec.rejected[0].find("load record: at /warp_ms"), std::string::npos) << rec.rejected[0];
    EXPECT_NE(rec.rejected[1].find("record type 'telemetry' is not in the shim contract"), std::string::npos)
        << rec.rejected[1];
    EXPECT_NE(rec.rejected[2].find("dirty record: at /file"), std::string::npos) << rec.rejected[2];
}

TEST(Records, ANewerContractIsNoted)
{
    std::string newer = process_line;
    newer.replace(newer.find("\"contract\":2"), 12, "\"contract\":9");
    std::istringstream in(newer);
    shim_records rec;
    read_shim_stream(in, rec);
    EXPECT_EQ(rec.newer_contract, 9);
    ASSERT_EQ(rec.processes.size(), 1u);
}

TEST(Records, LaunchRunsExpandAgainstSignatures)
{
    std::istringstream in(
        std::string("{\"type\":\"process\",\"pid\":3,\"ppid\":1,\"argv\":[],\"executable\":\"/py\",\"python\":\"3\","
                    "\"started_unix\":1.0,\"seq\":0,\"t_ms\":0}\n")
        + "{\"type\":\"exit\",\"launch_signatures\":[{\"kernel\":\"a\",\"module\":\"m\",\"dim\":4,\"device\":\"cpu\","
        "\"dtypes\":[\"array[float32,1]\"],\"block_dim\":1,\"adjoint\":false},"
        "{\"kernel\":\"b\",\"module\":\"m\",\"dim\":[2,2],\"device\":\"cpu\",\"dtypes\":[],\"block_dim\":1,"
        "\"adjoint\":true}],"
        "\"launch_runs\":[[0,5],[1,1],[0,2],[9,1]],\"launch_total\":8,\"launches_truncated\":false,"
        "\"runtime\":{},\"seq\":1,\"t_ms\":2}\n");
    shim_records rec;
    read_shim_stream(in, rec);
    ASSERT_EQ(rec.launches.size(), 3u);  // an out-of-range run is skipped
    EXPECT_EQ(rec.launches[0].count, 5);
    EXPECT_TRUE(rec.launches[1].adjoint);
    EXPECT_EQ(rec.launches[1].dim.value(), nlohmann::json::array({2, 2}));
    EXPECT_EQ(rec.launches[2].count, 2);
    EXPECT_EQ(rec.launch_total, 8);
    EXPECT_EQ(rec.launches[0].pid, 3);
}

// Every recorded stream, the GPU ones written under contract 1 (before the process record
// carried a version) among them, is inside the contract: nothing is left out reading them.
TEST(Records, EveryRecordedStreamIsInsideTheContract)
{
    namespace fs = std::filesystem;
    int files = 0;
    int old_contract = 0;
    for (const auto& e : fs::recursive_directory_iterator(std::string(XWARP_FIXTURES_DIR) + "/streams"))
    {
        if (e.path().extension() != ".jsonl")
        {
            continue;
        }
        std::ifstream in(e.path());
        std::string first;
        std::getline(in, first);
        old_contract += first.find("\"contract\"") == std::string::npos;
        in.seekg(0);
        shim_records rec;
        read_shim_stream(in, rec);
        ++files;
        EXPECT_EQ(rec.rejected_count, 0) << e.path() << ": " << (rec.rejected.empty() ? "" : rec.rejected[0]);
        EXPECT_EQ(rec.malformed_lines, 0) << e.path();
    }
    EXPECT_GT(files, 40);
    EXPECT_GT(old_contract, 0);  // the streams of contract 1 are still read
}

// pytest prints a failing test's captured output again in its report: Warp's log lines twice. A
// log line whose identity a hook recorded is that load, however often it is printed; only an
// identity no hook recorded is a process the shim did not reach.
TEST(Records, WarpsLogLinesPrintedTwiceAreNotLoadsWithoutAHookRecord)
{
    const std::filesystem::path from = std::string(XWARP_FIXTURES_DIR) + "/streams/cs1_late-warp1.19.0/sample-1/cold";
    const std::filesystem::path to = std::filesystem::temp_directory_path() / ("xwarp-records-twice-" + std::to_string(::getpid()));
    std::filesystem::remove_all(to);
    std::filesystem::copy(from, to);
    std::stringstream once;
    once << std::ifstream(from / "stdout").rdbuf();
    std::ofstream(to / "stdout", std::ios::trunc) << once.str() << "\n--- Captured stdout call ---\n" << once.str();
    const xwarp::run_result twice = xwarp::load_recorded_pass(to.string());
    for (const auto& n : twice.notes)
    {
        EXPECT_EQ(n.find("no hook record"), std::string::npos) << n;
    }
    // a line of an identity no hook recorded is named
    std::ofstream(to / "stdout", std::ios::app) << "Module stranger 1234abc load on device 'cpu' took 12.00 ms  (compiled)\n";
    const xwarp::run_result stranger = xwarp::load_recorded_pass(to.string());
    EXPECT_TRUE(std::any_of(stranger.notes.begin(), stranger.notes.end(),
                            [](const std::string& n) { return n.find("stranger 1234abc") != std::string::npos; }));
    std::filesystem::remove_all(to);
}
