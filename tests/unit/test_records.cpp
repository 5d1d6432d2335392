// The shim's JSON-lines records -> the model. The fixture was recorded from a real Warp 1.19
// run of a program that defines a second kernel after the first launch (paths anonymised).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "xwarp/runner/records.hpp"

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

TEST(Records, MalformedLinesAreCountedNotFatal)
{
    std::istringstream in(
        "{\"type\":\"process\",\"pid\":7,\"started_unix\":1.0,\"seq\":0,\"t_ms\":0}\n"
        "not json\n"
        "[1,2]\n"
        "{\"type\":\"load\",\"module\":\"m\",\"hash\":\"ab\",\"status\":\"compiled\",\"warp_ms\":\"oops\"}\n"
        "{\"type\":\"load\",\"module\":");  // a process killed mid-write
    shim_records rec;
    read_shim_stream(in, rec);
    EXPECT_EQ(rec.malformed_lines, 3);
    ASSERT_EQ(rec.loads.size(), 1u);
    EXPECT_FALSE(rec.loads[0].warp_ms);  // wrong type: dropped, not thrown
    EXPECT_EQ(rec.loads[0].pid, 7);
    ASSERT_EQ(rec.processes.size(), 1u);
    EXPECT_FALSE(rec.processes[0].exited_cleanly);
}

TEST(Records, LaunchRunsExpandAgainstSignatures)
{
    std::istringstream in(
        "{\"type\":\"process\",\"pid\":3}\n"
        "{\"type\":\"exit\",\"launch_signatures\":[{\"kernel\":\"a\",\"module\":\"m\",\"dim\":4,\"device\":\"cpu\","
        "\"dtypes\":[\"array[float32,1]\"],\"block_dim\":1,\"adjoint\":false},"
        "{\"kernel\":\"b\",\"module\":\"m\",\"dim\":[2,2],\"device\":\"cpu\",\"dtypes\":[],\"block_dim\":1,"
        "\"adjoint\":true}],"
        "\"launch_runs\":[[0,5],[1,1],[0,2],[9,1],[\"x\",1]],\"launch_total\":8}\n");
    shim_records rec;
    read_shim_stream(in, rec);
    ASSERT_EQ(rec.launches.size(), 3u);  // out-of-range and malformed runs are skipped
    EXPECT_EQ(rec.launches[0].count, 5);
    EXPECT_TRUE(rec.launches[1].adjoint);
    EXPECT_EQ(rec.launches[1].dim.value(), nlohmann::json::array({2, 2}));
    EXPECT_EQ(rec.launches[2].count, 2);
    EXPECT_EQ(rec.launch_total, 8);
    EXPECT_EQ(rec.launches[0].pid, 3);
}
