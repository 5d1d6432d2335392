// The subprocess layer: exit codes, signals, timeouts that kill the whole group, cancel; and
// the file stamps that tell a file read twice from one changed in between.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "xwarp/engine/env/environment.hpp"
#include "xwarp/engine/os/file_stamp.hpp"
#include "xwarp/engine/os/process.hpp"
#include "xwarp/engine/os/tempdir.hpp"
#include "xwarp/engine/runner/runner.hpp"

#include "../../src/engine/os/proc_table.hpp"  // the os layer's own: how a kill that is refused is counted

using namespace xwarp;

namespace
{
    process_spec shell(const std::string& script, const scoped_temp_dir& tmp)
    {
        process_spec s;
        s.exe = "/bin/sh";
        s.args = {"-c", script};
        s.env = {{"PATH", "/usr/bin:/bin"}};
        s.cwd = tmp.path();
        s.stdout_path = tmp.path() + "/out";
        s.stderr_path = tmp.path() + "/err";
        return s;
    }

    // A killed orphan can stay a zombie until init reaps it: that is not alive.
    // Waits for pid to end, woken by its exit (a pidfd, not a poll of /proc), at most timeout_ms.
    // True when it ended (a zombie has ended), or when no such process is left.
    bool ends_within(pid_t pid, int timeout_ms)
    {
        const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
        if (fd < 0)
        {
            return errno == ESRCH;
        }
        pollfd waiter{fd, POLLIN, 0};
        const int ready = poll(&waiter, 1, timeout_ms);
        close(fd);
        return ready > 0;
    }

    // The run's pids as its command writes them are its own PID namespace's where it has one:
    // the tests that follow a pid the command wrote run without one (the cgroup or the recorded
    // tree then holds the run, the fallbacks these tests are about).
    struct without_pid_namespace
    {
        without_pid_namespace() { ::setenv("XWARP_PIDNS", "off", 1); }
        ~without_pid_namespace() { ::unsetenv("XWARP_PIDNS"); }
    };

    // Processes of this machine running exactly `argv` (NUL-separated), as this process sees them.
    std::vector<pid_t> running(const std::string& argv)
    {
        std::vector<pid_t> out;
        for (const auto& entry : std::filesystem::directory_iterator("/proc"))
        {
            const std::string name = entry.path().filename();
            if (name.find_first_not_of("0123456789") != std::string::npos)
            {
                continue;
            }
            std::ifstream cmdline(entry.path() / "cmdline");
            const std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
            const auto st = proc::stat_of(static_cast<pid_t>(std::stoi(name)));
            if (text == argv && st && st->state != 'Z')
            {
                out.push_back(static_cast<pid_t>(std::stoi(name)));
            }
        }
        return out;
    }

    pid_t read_pid(const std::string& path)
    {
        std::ifstream in(path);
        pid_t p = 0;
        in >> p;
        return p;
    }
}

TEST(Process, ExitCodeAndOutputFiles)
{
    scoped_temp_dir tmp("xwarp-test-");
    auto out = run_process(shell("echo hello; echo oops >&2; exit 3", tmp), std::nullopt, {}, {});
    ASSERT_TRUE(out.exit_code);
    EXPECT_EQ(*out.exit_code, 3);
    EXPECT_FALSE(out.timed_out);
    std::ifstream o(tmp.path() + "/out");
    std::string line;
    std::getline(o, line);
    EXPECT_EQ(line, "hello");
}

TEST(Process, KilledBySignal)
{
    scoped_temp_dir tmp("xwarp-test-");
    auto out = run_process(shell("kill -9 $$", tmp), std::nullopt, {}, {});
    EXPECT_FALSE(out.exit_code);
    ASSERT_TRUE(out.term_signal);
    EXPECT_EQ(*out.term_signal, SIGKILL);
}

TEST(Process, TimeoutKillsTheWholeGroup)
{
    without_pid_namespace fallback;
    scoped_temp_dir tmp("xwarp-test-");
    auto t0 = std::chrono::steady_clock::now();
    auto out = run_process(shell("sleep 60 & echo $! > grandchild; sleep 60", tmp), 0.5, {}, {});
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(out.timed_out);
    EXPECT_LT(took, 5.0);
    pid_t gc = read_pid(tmp.path() + "/grandchild");
    ASSERT_GT(gc, 0);
    EXPECT_TRUE(ends_within(gc, 5000)) << "grandchild " << gc << " survived the timeout";
}

TEST(Process, BackgroundChildrenDieWhenTheCommandEnds)
{
    without_pid_namespace fallback;
    scoped_temp_dir tmp("xwarp-test-");
    auto out = run_process(shell("sleep 60 & echo $! > bg; exit 0", tmp), std::nullopt, {}, {});
    EXPECT_EQ(*out.exit_code, 0);
    pid_t bg = read_pid(tmp.path() + "/bg");
    ASSERT_GT(bg, 0);
    EXPECT_TRUE(ends_within(bg, 5000)) << "background child " << bg << " survived the command";
}

TEST(Process, CancelStopsTheRun)
{
    scoped_temp_dir tmp("xwarp-test-");
    int polls = 0;
    auto out = run_process(shell("sleep 60", tmp), std::nullopt, [&] { return ++polls > 20; }, {});
    EXPECT_TRUE(out.interrupted);
    EXPECT_LT(out.wall_ms, 5000.0);
}

TEST(Process, ADaemonInANewSessionWithAnEmptyEnvironmentIsTheCommandsToo)
{
    without_pid_namespace fallback;
    // no token in its environment, not in the group, reparented here when its shell exits
    scoped_temp_dir tmp("xwarp-test-");
    auto out = run_process(shell("setsid env -i sleep 61 & echo $! > bg; "
                                 "until [ \"$(cut -d' ' -f6 /proc/$!/stat)\" != \"$(cut -d' ' -f6 /proc/$$/stat)\" ]; do :; done",
                                 tmp),
                           std::nullopt, {}, {});
    EXPECT_EQ(*out.exit_code, 0);
    const pid_t bg = read_pid(tmp.path() + "/bg");
    ASSERT_GT(bg, 0);
    EXPECT_TRUE(ends_within(bg, 5000)) << "the daemon " << bg << " survived the command";
    EXPECT_EQ(out.strays_killed, 1);
    EXPECT_TRUE(out.strays_left.empty());
}

TEST(Process, AProcessThisUserMayNotKillIsNamedAsLeftNotCountedAsKilled)
{
    if (::geteuid() != 0)
    {
        GTEST_SKIP() << "making another user's process takes root";
    }
    const pid_t roots = ::fork();
    ASSERT_GE(roots, 0);
    if (roots == 0)
    {
        ::execlp("sleep", "sleep", "62", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // until it is sleep (a busy machine may not have run its exec yet): its name is what is checked
    for (int i = 0; i < 500 && proc::describe(roots) != std::to_string(roots) + " (sleep)"; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const pid_t user = ::fork();
    ASSERT_GE(user, 0);
    if (user == 0)
    {
        // a probe run by another user: the root process is not its to kill
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
        {
            ::_exit(2);
        }
        proc::kill_tally tally;
        proc::kill_alive({roots}, tally);
        const bool named = proc::describe(roots) == std::to_string(roots) + " (sleep)";
        ::_exit(tally.killed.empty() && tally.refused == std::vector<pid_t>{roots} && named ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(user, &status, 0), user);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    const auto st = proc::stat_of(roots);
    EXPECT_TRUE(st && st->state != 'Z') << "the refused kill killed it";
    ::kill(roots, SIGKILL);
    ::waitpid(roots, nullptr, 0);
}

// As root the command runs in a PID namespace of its own. A daemon that leaves the session, empties
// its environment and moves itself out of the run's cgroup into the machine's root one (which
// root may do, and which the cgroup cannot stop) still dies when the command ends; the init
// counts it, and the command's exit status is its own.
TEST(Process, ADaemonThatLeavesTheCgroupDiesWithTheCommandInItsPidNamespace)
{
    if (::geteuid() != 0)
    {
        GTEST_SKIP() << "a PID namespace takes CAP_SYS_ADMIN: as another user the cgroup or the recorded tree holds the run";
    }
    scoped_temp_dir tmp("xwarp-test-");
    const std::string daemon = "sleep\0" "63.25\0";
    auto out = run_process(shell("setsid sh -c 'echo 0 > /sys/fs/cgroup/cgroup.procs 2>/dev/null; exec env -i sleep 63.25' & "
                                 "until [ \"$(cut -d' ' -f6 /proc/$!/stat)\" != \"$(cut -d' ' -f6 /proc/$$/stat)\" ]; do :; done; "
                                 "echo $$ > mine; echo $PPID > parent; exit 7",
                                 tmp),
                           std::nullopt, {}, {});
    ASSERT_EQ(out.containment, held_by::pid_namespace) << "as root the kernel lets a PID namespace be made";
    ASSERT_TRUE(out.exit_code);
    EXPECT_EQ(*out.exit_code, 7);
    EXPECT_EQ(read_pid(tmp.path() + "/mine"), 3) << "the command is the namespace's third process, after its init and its parent";
    EXPECT_EQ(read_pid(tmp.path() + "/parent"), 2) << "the command's parent is not the namespace's init: it exits when orphaned";
    EXPECT_EQ(out.strays_killed, 1);
    for (int i = 0; i < 500 && !running(std::string(daemon.data(), daemon.size())).empty(); ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(running(std::string(daemon.data(), daemon.size())).empty()) << "the daemon outlived its namespace";

    auto killed = run_process(shell("kill -9 $$", tmp), std::nullopt, {}, {});
    EXPECT_EQ(killed.containment, held_by::pid_namespace);
    ASSERT_TRUE(killed.term_signal) << "a signal's end reaches the probe as the signal";
    EXPECT_EQ(*killed.term_signal, SIGKILL);

    without_pid_namespace fallback;
    auto plain = run_process(shell("exit 0", tmp), std::nullopt, {}, {});
    EXPECT_NE(plain.containment, held_by::pid_namespace);
}

TEST(Process, SpawnErrorIsReported)
{
    scoped_temp_dir tmp("xwarp-test-");
    auto spec = shell("true", tmp);
    spec.exe = tmp.path() + "/does-not-exist";
    auto out = run_process(spec, std::nullopt, {}, {});
    EXPECT_FALSE(out.spawn_error.empty());
}

TEST(TempDir, RemovedOnScopeExit)
{
    std::string path;
    {
        scoped_temp_dir tmp("xwarp-test-");
        path = tmp.path();
        std::ofstream(tmp.sub("a/b") + "/file") << "x";
        EXPECT_TRUE(std::ifstream(path + "/a/b/file").good());
    }
    EXPECT_FALSE(std::ifstream(path + "/a/b/file").good());
}

// prepare_command starts the host-facts query (cudart) on another thread. A command that
// ends before any pass read them, a usage error found after it, must not let the process
// exit while that thread is still starting the driver: exit's cudart teardown crashed
// warp-probe (SIGSEGV). ctest runs each test in a process of its own, so the query here is
// this process's first.
TEST(FileStamp, ChangesWithAFileWrittenInPlaceOrReplacedAndIsNoneForWhatIsReadOnce)
{
    scoped_temp_dir tmp("xwarp-test-");
    const std::string path = tmp.path() + "/report.json";
    const auto write = [](const std::string& to, const std::string& text)
    {
        std::ofstream(to, std::ios::binary | std::ios::trunc) << text;
    };
    write(path, "{\"a\": 1}");
    const auto first = stamp_regular_file(path);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->size, 8);
    EXPECT_EQ(stamp_regular_file(path), first);  // read again, unchanged

    // the same size written again: only its time tells
    std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) - std::chrono::seconds(5));
    const auto backdated = stamp_regular_file(path);
    EXPECT_NE(backdated, first);
    write(path, "{\"a\": 2}");
    EXPECT_NE(stamp_regular_file(path), backdated);

    // another file renamed over it, with the same size and time: its inode tells
    const std::string other = tmp.path() + "/other.json";
    write(other, "{\"a\": 2}");
    const auto now = stamp_regular_file(path);
    std::filesystem::last_write_time(other, std::filesystem::last_write_time(path));
    std::filesystem::rename(other, path);
    const auto replaced = stamp_regular_file(path);
    ASSERT_TRUE(replaced.has_value());
    EXPECT_EQ(replaced->size, now->size);
    EXPECT_EQ(replaced->modified_ns, now->modified_ns);
    EXPECT_NE(replaced, now);

    const std::string fifo = tmp.path() + "/pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_FALSE(stamp_regular_file(fifo).has_value());
    EXPECT_FALSE(stamp_regular_file(tmp.path()).has_value());
    EXPECT_FALSE(stamp_regular_file(tmp.path() + "/missing.json").has_value());
}

// keep-cuda-cache's sample: a filling cold pass, then every cache emptied but the kept one, then
// the sample's passes on what is left. The command says what its caches held when it started,
// and leaves a new file in each (mktemp: in a PID namespace of its own every pass has the same pid).
TEST(Runner, ASampleOnKeptCachesStartsFromTheCacheAFillingPassLeftAndNothingElse)
{
    scoped_temp_dir shim("xwarp-test-shim-");
    std::ofstream(shim.path() + "/sitecustomize.py") << "\n";
    measure_options options;
    options.command = {"/bin/sh", "-c",
                       "echo \"cuda=$(ls \"$CUDA_CACHE_PATH\" 2>/dev/null | wc -l) warp=$(find \"$WARP_CACHE_PATH\" -type f "
                       "2>/dev/null | wc -l)\"; mkdir -p \"$CUDA_CACHE_PATH\" \"$WARP_CACHE_PATH/1.19.0/lto\"; "
                       "for f in \"$CUDA_CACHE_PATH/c\" \"$WARP_CACHE_PATH/1.19.0/m\" \"$WARP_CACHE_PATH/1.19.0/lto/a\"; do "
                       "mktemp \"$f.XXXXXX\" >/dev/null; done"};
    options.shim_dir = shim.path();
    const prepared_command command = prepare_command(options);
    const sample kept_cuda = run_sample_on_kept_caches(command, 1, {cache_kind::cuda}, {}, "keep-cuda-cache", nullptr, {});
    ASSERT_TRUE(kept_cuda.ok()) << kept_cuda.cold.stderr_tail;
    EXPECT_EQ(kept_cuda.cold.stdout_tail, "cuda=1 warp=0\n");
    EXPECT_EQ(kept_cuda.warm->stdout_tail, "cuda=2 warp=2\n");  // the warm pass on what the cold one left
    const auto held = [](const run_result& pass, cache_kind kind)
    {
        for (const auto& c : pass.caches)
        {
            if (c.kind == kind)
            {
                return c.files_before;
            }
        }
        return std::int64_t{-1};
    };
    EXPECT_EQ(held(kept_cuda.cold, cache_kind::cuda), 1);
    EXPECT_EQ(held(kept_cuda.cold, cache_kind::warp_kernels), 0);
    const sample kept_lto = run_sample_on_kept_caches(command, 1, {cache_kind::warp_lto}, {}, "keep-lto-cache", nullptr, {});
    ASSERT_TRUE(kept_lto.ok()) << kept_lto.cold.stderr_tail;
    EXPECT_EQ(kept_lto.cold.stdout_tail, "cuda=0 warp=1\n");  // the lto/ file alone
    EXPECT_EQ(held(kept_lto.cold, cache_kind::warp_lto), 1);
    EXPECT_EQ(held(kept_lto.cold, cache_kind::warp_kernels), 0);
}

TEST(Runner, APreparedCommandLeavingItsScopeWaitsForTheHostFactsQuery)
{
    scoped_temp_dir shim("xwarp-test-shim-");
    std::ofstream(shim.path() + "/sitecustomize.py") << "\n";
    measure_options options;
    options.command = {"/bin/true"};
    options.shim_dir = shim.path();
    {
        const prepared_command command = prepare_command(options);
        EXPECT_EQ(command.exe, "/bin/true");
    }
    EXPECT_FALSE(host_environment_being_collected());
}

// The driver starts under a private CUDA_CACHE_PATH (it must leave the user's compute cache
// alone). setenv is not thread-safe: the variable is set before the query's thread starts and
// put back by the thread that waits for it, never changed on the query's own thread while
// other threads (the kernel's) may read the environment. ctest runs each test in a process of
// its own: the query here is this process's first.
TEST(Runner, TheHostFactsQuerysCacheVariableIsSetAndPutBackByTheThreadThatAsks)
{
    if (!built_with_cuda_toolkit())
    {
        GTEST_SKIP() << "built without the CUDA toolkit: the query starts no driver";
    }
    ::setenv("CUDA_CACHE_PATH", "/nonexistent/the-users-cache", 1);
    start_collecting_host_environment();
    const char* during = std::getenv("CUDA_CACHE_PATH");  // already set when start returns
    ASSERT_NE(during, nullptr);
    const std::string private_dir = during;
    EXPECT_NE(private_dir.find("/xwarp-cuda-cache-"), std::string::npos) << private_dir;
    EXPECT_TRUE(std::filesystem::is_directory(private_dir)) << private_dir;
    finish_collecting_host_environment();
    EXPECT_STREQ(std::getenv("CUDA_CACHE_PATH"), "/nonexistent/the-users-cache");
    EXPECT_FALSE(std::filesystem::exists(private_dir)) << private_dir;
    ::unsetenv("CUDA_CACHE_PATH");
}
