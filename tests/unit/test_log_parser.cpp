// Warp's own log lines: the fallback source. Every form Warp printed from 1.3 on.
#include <sys/resource.h>

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "xwarp/engine/runner/records.hpp"

using namespace xwarp;

TEST(LogParser, ModuleLineWithHashAndStatus)
{
    auto l = parse_module_line("Module __main__ 7f264d6 load on device 'cpu' took 2667.76 ms  (compiled)");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->module, "__main__");
    EXPECT_EQ(l->hash, "7f264d6");
    EXPECT_EQ(l->device, "cpu");
    EXPECT_FALSE(l->block_dim);
    ASSERT_TRUE(l->warp_ms);
    EXPECT_DOUBLE_EQ(*l->warp_ms, 2667.76);
    EXPECT_EQ(l->status, load_status::compiled);
    EXPECT_EQ(l->source, figure_source::log);
}

TEST(LogParser, DebugFormWithBlockDimAndIndent)
{
    auto l = parse_module_line("   Module warp.sparse 9004220 load on device 'cuda:0' (block_dim=128) took 12.5 ms  (cached)\r");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->module, "warp.sparse");
    EXPECT_EQ(l->hash, "9004220");
    EXPECT_EQ(l->device, "cuda:0");
    ASSERT_TRUE(l->block_dim);
    EXPECT_EQ(*l->block_dim, 128);
    EXPECT_EQ(l->status, load_status::cached);
}

TEST(LogParser, StripHashModuleHasNoHash)
{
    auto l = parse_module_line("Module my_mod load on device 'cpu' took 3.00 ms  (error)");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->module, "my_mod");
    EXPECT_EQ(l->hash, "");
    EXPECT_EQ(l->status, load_status::error);
}

TEST(LogParser, ModuleNameWithSpacesAndUniqueSuffix)
{
    auto l = parse_module_line("Module k_e8422eb6 66e742d load on device 'cpu' took 1450.94 ms (compiled)");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->module, "k_e8422eb6");
    EXPECT_EQ(l->hash, "66e742d");
}

TEST(LogParser, RejectsOtherLines)
{
    EXPECT_FALSE(parse_module_line("Module __main__ 7f264d6 load on device 'cpu' ..."));  // DEBUG start line
    EXPECT_FALSE(parse_module_line("Module __main__ load on device 'cpu' took 3 ms"));    // 1.0.x: no status
    EXPECT_FALSE(parse_module_line("print: Module x load on device 'cpu' took 1 ms  (compiled)"));
    EXPECT_FALSE(parse_module_line(std::string(10000, 'M')));
    EXPECT_FALSE(parse_module_line(""));
}

TEST(LogParser, CompileLines)
{
    std::string kind;
    auto a = parse_compile_line("    Compile x86 took 3251.79 ms", &kind);
    ASSERT_TRUE(a);
    EXPECT_DOUBLE_EQ(*a, 3251.79);
    EXPECT_EQ(kind, "cpu");
    auto b = parse_compile_line("  Compile CUDA (arch=90a, mode=release, block_dim=256) took 812.00 ms", &kind);
    ASSERT_TRUE(b);
    EXPECT_DOUBLE_EQ(*b, 812.0);
    EXPECT_EQ(kind, "cuda");
    EXPECT_FALSE(parse_compile_line("Compile x86 ..."));
}

TEST(LogParser, ScanAttributesSerialCompileLines)
{
    std::istringstream in(
        "Warp 1.19.0 initialized:\n"
        "    Compile x86 took 100.00 ms\n"
        "Module a 1111111 load on device 'cpu' (block_dim=1) took 120.00 ms  (compiled)\n"
        "Module a 2222222 load on device 'cpu' (block_dim=1) took 2.00 ms  (cached)\n"
        "    Compile x86 took 50.00 ms\n"
        "    Compile x86 took 60.00 ms\n"
        "Module b 3333333 load on device 'cpu' (block_dim=1) took 130.00 ms  (compiled)\n");
    auto scan = scan_warp_log(in);
    ASSERT_EQ(scan.loads.size(), 3u);
    EXPECT_EQ(scan.native_lines, 3);
    EXPECT_DOUBLE_EQ(scan.native_ms_total, 210.0);
    ASSERT_TRUE(scan.loads[0].native_ms);
    EXPECT_DOUBLE_EQ(*scan.loads[0].native_ms, 100.0);
    EXPECT_FALSE(scan.loads[1].native_ms);
    // Two compile lines before one module line: interleaved builds, not attributed.
    EXPECT_FALSE(scan.loads[2].native_ms);
}

// A program that prints a huge line (progress without newlines): the line is read past, kept cut,
// and Warp's lines around it still parse; the last line needs no newline.
TEST(LogParser, AHugeLineIsReadPastAndTheLinesAroundItStillParse)
{
    std::string text = "Module before 1111111 load on device 'cpu' took 1.00 ms  (compiled)\n";
    text += std::string(32u << 20, 'x') + "\n";
    text += "Module after 2222222 load on device 'cpu' took 2.00 ms  (cached)";
    std::istringstream in(text);
    const auto scan = scan_warp_log(in);
    ASSERT_EQ(scan.loads.size(), 2u);
    EXPECT_EQ(scan.loads[0].module, "before");
    EXPECT_EQ(scan.loads[1].module, "after");
    EXPECT_EQ(scan.loads[1].status, load_status::cached);
    // and it is read past, not held: a 512 MiB line that no buffer holds whole leaves the peak
    // memory where it was (std::getline held it all)
    struct endless_line : std::streambuf
    {
        std::size_t left;
        std::string tail = "\nModule last 3333333 load on device 'cpu' took 3.00 ms  (compiled)\n";
        char chunk[1 << 16];
        explicit endless_line(std::size_t bytes) : left(bytes) { std::fill(std::begin(chunk), std::end(chunk), 'z'); }
        int_type underflow() override
        {
            if (left > 0)
            {
                const std::size_t n = std::min(left, sizeof(chunk));
                left -= n;
                setg(chunk, chunk, chunk + n);
                return traits_type::to_int_type(*gptr());
            }
            if (!tail_served)
            {
                tail_served = true;
                setg(tail.data(), tail.data(), tail.data() + tail.size());
                return traits_type::to_int_type(*gptr());
            }
            return traits_type::eof();
        }
        bool tail_served = false;
    };
    rusage before{};
    ::getrusage(RUSAGE_SELF, &before);
    endless_line huge(std::size_t{512} << 20);
    std::istream stream(&huge);
    const auto last = scan_warp_log(stream);
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    ASSERT_EQ(last.loads.size(), 1u);
    EXPECT_EQ(last.loads[0].module, "last");
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64L << 10) << "KiB of peak memory grew";  // ru_maxrss is in KiB
    std::istringstream failures("FAILED t.py::test_a - boom\n" + std::string(1u << 20, 'y') + "\nERROR t.py::test_b\n");
    std::vector<std::string> failed;
    scan_test_failures(failures, failed, 10);
    EXPECT_EQ(failed, (std::vector<std::string>{"t.py::test_a", "t.py::test_b"}));
}
