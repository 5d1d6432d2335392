#include "xwarp/engine/env/environment.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>
#include <initializer_list>
#include <cstdint>

#include <sys/utsname.h>

#include "xwarp/engine/os/tempdir.hpp"
#include "xwarp/version.hpp"

#ifdef XWARP_HAVE_CUDA
#include <dlfcn.h>
#endif

namespace xwarp
{
    namespace
    {
        std::string cpu_model()
        {
            std::ifstream in("/proc/cpuinfo");
            std::string line;
            while (std::getline(in, line))
            {
                if (line.rfind("model name", 0) == 0)
                {
                    auto colon = line.find(':');
                    if (colon != std::string::npos)
                    {
                        auto v = line.substr(colon + 1);
                        v.erase(0, v.find_first_not_of(' '));
                        return v;
                    }
                }
            }
            return {};
        }

#ifdef XWARP_HAVE_CUDA
        std::string cuda_version_string(int v)
        {
            // CUDA encodes versions as 1000*major + 10*minor.
            return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
        }

        // CUDA is found at run time, as Warp finds it: the driver (libcuda.so.1), NVRTC and the
        // runtime loaded from the user's environment by their sonames (the loader's path, then
        // $CUDA_HOME, $CUDA_PATH and /usr/local/cuda), never linked in. So one build reports the
        // CUDA of whatever machine it runs on (a wheel on a Jetson or a GH200 as on an x86_64
        // workstation), and a machine without CUDA costs nothing at start. Their C entry points
        // take ints and pointers only: no CUDA header is needed to build this.
        struct opened_library
        {
            void* handle = nullptr;
            std::string name;  // the soname or path that loaded
        };

        opened_library open_first(std::initializer_list<const char*> sonames)
        {
            std::vector<std::string> folders;
            for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
            {
                if (const char* v = std::getenv(var); v && *v)
                {
                    folders.push_back(std::string(v) + "/lib64");
                }
            }
            folders.push_back("/usr/local/cuda/lib64");
            for (const char* soname : sonames)
            {
                if (void* h = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL))
                {
                    return {h, soname};
                }
            }
            for (const auto& folder : folders)
            {
                for (const char* soname : sonames)
                {
                    const std::string path = folder + "/" + soname;
                    if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
                    {
                        return {h, path};
                    }
                }
            }
            return {};
        }

        template <class F>
        F symbol(void* library, const char* name)
        {
            return reinterpret_cast<F>(::dlsym(library, name));
        }

        // NVRTC's results this code tells apart (nvrtc.h's nvrtcResult).
        constexpr int nvrtc_success = 0;
        constexpr int nvrtc_program_creation_failure = 2;
        constexpr int nvrtc_invalid_option = 5;
        using nvrtc_program = void*;

        // The driver creates ~/.nv/ComputeCache when it initialises, even for a device query
        // (seen on an H200 with driver 580): the probe's own query must leave the user's
        // compute cache alone, so the driver starts with a private one, removed afterwards.
        // The driver reads CUDA_CACHE_PATH once, at its first initialisation in the process.
        // setenv is not thread-safe (a getenv on another thread can read the array it frees):
        // it is made and dropped on the thread that asks for the facts, never on the query's.
        class private_compute_cache
        {
        public:
            private_compute_cache()
                : m_dir("xwarp-cuda-cache-")
            {
                if (const char* v = std::getenv("CUDA_CACHE_PATH"))
                {
                    m_previous = v;
                }
                ::setenv("CUDA_CACHE_PATH", m_dir.path().c_str(), 1);
            }
            ~private_compute_cache()
            {
                if (m_previous)
                {
                    ::setenv("CUDA_CACHE_PATH", m_previous->c_str(), 1);
                }
                else
                {
                    ::unsetenv("CUDA_CACHE_PATH");
                }
            }
            private_compute_cache(const private_compute_cache&) = delete;
            private_compute_cache& operator=(const private_compute_cache&) = delete;

        private:
            scoped_temp_dir m_dir;
            std::optional<std::string> m_previous;
        };

        // Whether this NVRTC caches its compilations (NVRTC 12.9 and later keep them in the CUDA
        // driver's compute cache, CUDA_CACHE_PATH): a tiny program compiled twice with NVRTC's
        // own cache trace (--enable-cache-trace), and what its log says. Feature detection, not a
        // version check: an NVRTC without the trace option, without a driver to cache in, or with
        // the cache disabled says so. Runs under the caller's private compute cache.
        void check_nvrtc_cache(const opened_library& nvrtc, environment& env)
        {
            using create_fn = int (*)(nvrtc_program*, const char*, const char*, int, const char* const*, const char* const*);
            using compile_fn = int (*)(nvrtc_program, int, const char* const*);
            using log_size_fn = int (*)(nvrtc_program, size_t*);
            using log_fn = int (*)(nvrtc_program, char*);
            using destroy_fn = int (*)(nvrtc_program*);
            auto create = symbol<create_fn>(nvrtc.handle, "nvrtcCreateProgram");
            auto compile = symbol<compile_fn>(nvrtc.handle, "nvrtcCompileProgram");
            auto log_size = symbol<log_size_fn>(nvrtc.handle, "nvrtcGetProgramLogSize");
            auto log = symbol<log_fn>(nvrtc.handle, "nvrtcGetProgramLog");
            auto destroy = symbol<destroy_fn>(nvrtc.handle, "nvrtcDestroyProgram");
            if (!create || !compile || !log_size || !log || !destroy)
            {
                return;
            }
            const char* source = "extern \"C\" __global__ void xwarp_cache_check(float* a) { a[threadIdx.x] *= 2.0f; }";
            const char* options[] = {"--gpu-architecture=compute_75", "--enable-cache-trace"};
            const auto compile_once = [&](double& ms, std::string& text) -> int
            {
                nvrtc_program program = nullptr;
                if (create(&program, source, "xwarp_cache_check.cu", 0, nullptr, nullptr) != nvrtc_success)
                {
                    return nvrtc_program_creation_failure;
                }
                const auto t0 = std::chrono::steady_clock::now();
                const int rc = compile(program, 2, options);
                ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                size_t size = 0;
                if (log_size(program, &size) == nvrtc_success && size > 1)
                {
                    text.resize(size);
                    log(program, text.data());
                }
                destroy(&program);
                return rc;
            };
            double first_ms = 0.0;
            double second_ms = 0.0;
            std::string first_log;
            std::string second_log;
            const int first = compile_once(first_ms, first_log);
            env.sources["nvrtc_cache"] = "two compiles of one program with --enable-cache-trace (" + nvrtc.name + ")";
            if (first == nvrtc_invalid_option)
            {
                env.nvrtc_cache = nvrtc_cache_state::not_supported;
                return;
            }
            if (first != nvrtc_success || compile_once(second_ms, second_log) != nvrtc_success)
            {
                return;  // unknown
            }
            env.nvrtc_cache_first_ms = first_ms;
            env.nvrtc_cache_second_ms = second_ms;
            const auto says = [&](const char* words) { return first_log.find(words) != std::string::npos || second_log.find(words) != std::string::npos; };
            env.nvrtc_cache = second_log.find("retrieved cached") != std::string::npos ? nvrtc_cache_state::caches
                              : says("fail to load driver lib")                       ? nvrtc_cache_state::no_driver
                              : says("Disable nvrtc cache") || says("CUDA_CACHE_DISABLE: 1")
                                  ? nvrtc_cache_state::disabled
                                  : nvrtc_cache_state::not_cached;
        }

        // The driver must start under a private_compute_cache (its caller's: environment
        // variables are set and put back only on the thread that starts the query).
        void collect_cuda(environment& env)
        {
            // NVRTC is opened when asked, not linked: loading and relocating the library at
            // every probe start costs more than a trivial command's whole run.
            const opened_library nvrtc = open_first({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"});
            if (nvrtc.handle)
            {
                int major = 0;
                int minor = 0;
                auto version = symbol<int (*)(int*, int*)>(nvrtc.handle, "nvrtcVersion");
                if (version && version(&major, &minor) == nvrtc_success)
                {
                    env.nvrtc_version = std::to_string(major) + "." + std::to_string(minor);
                    env.sources["nvrtc_version"] = "nvrtcVersion (" + nvrtc.name + ")";
                    check_nvrtc_cache(nvrtc, env);
                }
            }
            const opened_library cudart = open_first({"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"});
            int runtime = 0;
            if (auto get = cudart.handle ? symbol<int (*)(int*)>(cudart.handle, "cudaRuntimeGetVersion") : nullptr;
                get && get(&runtime) == 0 && runtime > 0)
            {
                env.cuda_toolkit = cuda_version_string(runtime);
                env.sources["cuda_toolkit"] = "cudaRuntimeGetVersion (" + cudart.name + ")";
            }
            // The driver's API, as Warp uses it: a machine without a driver has no libcuda.so.1.
            const opened_library driver_lib = open_first({"libcuda.so.1"});
            int driver = 0;
            using int_fn = int (*)(int*);
            auto driver_version = driver_lib.handle ? symbol<int_fn>(driver_lib.handle, "cuDriverGetVersion") : nullptr;
            if (driver_version && driver_version(&driver) == 0 && driver > 0)
            {
                env.cuda_driver = cuda_version_string(driver);
                env.sources["cuda_driver"] = "cuDriverGetVersion (libcuda.so.1)";
            }
            if (driver == 0)
            {
                env.cuda_status = "no CUDA device (no CUDA driver found)";
                return;
            }
            auto init = symbol<int (*)(unsigned)>(driver_lib.handle, "cuInit");
            auto device_count = symbol<int_fn>(driver_lib.handle, "cuDeviceGetCount");
            auto device_get = symbol<int (*)(int*, int)>(driver_lib.handle, "cuDeviceGet");
            auto device_name = symbol<int (*)(char*, int, int)>(driver_lib.handle, "cuDeviceGetName");
            auto attribute = symbol<int (*)(int*, int, int)>(driver_lib.handle, "cuDeviceGetAttribute");
            auto total_memory = symbol<int (*)(size_t*, int)>(driver_lib.handle, "cuDeviceTotalMem_v2");
            auto error_string = symbol<int (*)(int, const char**)>(driver_lib.handle, "cuGetErrorString");
            if (!init || !device_count || !device_get || !device_name || !attribute || !total_memory)
            {
                env.cuda_status = "no CUDA device (libcuda.so.1 lacks the device queries)";
                return;
            }
            int count = 0;
            int err = init(0);
            if (err == 0)
            {
                err = device_count(&count);
            }
            if (err != 0 || count == 0)
            {
                constexpr int no_device = 100;
                if (!env.cuda_toolkit.empty() && runtime > driver)
                {
                    env.cuda_status = "CUDA driver " + env.cuda_driver + " is older than the CUDA runtime "
                                      + env.cuda_toolkit + ": devices not listed";
                }
                else
                {
                    const char* words = nullptr;
                    if (err == no_device || count == 0 || !error_string || error_string(err, &words) != 0 || !words)
                    {
                        words = err == 0 || err == no_device ? "no CUDA-capable device is detected" : "the driver failed";
                    }
                    env.cuda_status = std::string("no CUDA device (") + words + ")";
                }
                return;
            }
            constexpr int capability_major = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
            constexpr int capability_minor = 76;
            for (int i = 0; i < count; ++i)
            {
                int device = 0;
                char name[256] = {};
                int cc_major = 0;
                int cc_minor = 0;
                size_t memory = 0;
                if (device_get(&device, i) != 0 || device_name(name, sizeof name - 1, device) != 0
                    || attribute(&cc_major, capability_major, device) != 0 || attribute(&cc_minor, capability_minor, device) != 0
                    || total_memory(&memory, device) != 0)
                {
                    continue;
                }
                gpu_info g;
                g.ordinal = i;
                g.name = name;
                g.compute_capability = std::to_string(cc_major) + "." + std::to_string(cc_minor);
                g.memory_bytes = static_cast<std::int64_t>(memory);
                env.gpus.push_back(g);
            }
            env.cuda_status = std::to_string(env.gpus.size()) + " CUDA device(s)";
            env.sources["gpus"] = "cuDeviceGetName, cuDeviceGetAttribute, cuDeviceTotalMem (libcuda.so.1)";
        }
#endif
    }

    namespace
    {
        std::string first_line(const std::filesystem::path& p)
        {
            std::ifstream in(p);
            std::string line;
            std::getline(in, line);
            while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            {
                line.pop_back();
            }
            return line;
        }

        bool is_commit_id(const std::string& s)
        {
            return (s.size() == 40 || s.size() == 64)
                   && s.find_first_not_of("0123456789abcdef") == std::string::npos;
        }
    }

    std::string project_commit(const std::string& folder)
    {
        namespace fs = std::filesystem;
        std::error_code ec;
        fs::path dir = fs::absolute(folder.empty() ? fs::path(".") : fs::path(folder), ec);
        if (ec)
        {
            return {};
        }
        for (int depth = 0; depth < 64 && !dir.empty(); ++depth)
        {
            const fs::path dot_git = dir / ".git";
            fs::path git_dir;
            std::error_code missing;  // a folder without .git is the usual case, not an error
            if (fs::is_directory(dot_git, missing))
            {
                git_dir = dot_git;
            }
            else if (fs::is_regular_file(dot_git, missing))
            {
                // A linked work tree or a submodule: "gitdir: PATH".
                const std::string line = first_line(dot_git);
                if (line.rfind("gitdir: ", 0) != 0)
                {
                    return {};
                }
                git_dir = fs::path(line.substr(8));
                if (git_dir.is_relative())
                {
                    git_dir = dir / git_dir;
                }
            }
            if (!git_dir.empty())
            {
                const std::string head = first_line(git_dir / "HEAD");
                if (is_commit_id(head))
                {
                    return head;  // a detached HEAD
                }
                if (head.rfind("ref: ", 0) != 0)
                {
                    return {};
                }
                const std::string ref = head.substr(5);
                // A linked work tree keeps its refs in the common folder.
                fs::path common = git_dir;
                const std::string common_rel = first_line(git_dir / "commondir");
                if (!common_rel.empty())
                {
                    common = fs::path(common_rel).is_relative() ? git_dir / common_rel : fs::path(common_rel);
                }
                for (const fs::path& base : {git_dir, common})
                {
                    const std::string id = first_line(base / ref);
                    if (is_commit_id(id))
                    {
                        return id;
                    }
                }
                std::ifstream packed(common / "packed-refs");
                std::string line;
                while (std::getline(packed, line))
                {
                    const auto space = line.find(' ');
                    if (space != std::string::npos && line.compare(space + 1, std::string::npos, ref) == 0
                        && is_commit_id(line.substr(0, space)))
                    {
                        return line.substr(0, space);
                    }
                }
                return {};  // a branch with no commit yet
            }
            if (!dir.has_parent_path() || dir.parent_path() == dir)
            {
                break;
            }
            dir = dir.parent_path();
        }
        return {};
    }

    bool built_with_cuda_toolkit()
    {
#ifdef XWARP_HAVE_CUDA
        return true;
#else
        return false;
#endif
    }

    namespace
    {
        // Under the compute cache its caller set up (when the build has CUDA).
        environment collect_host_environment_as_set_up()
        {
            environment env;
            env.probe_version = XWARP_VERSION;
            struct utsname u{};
            if (::uname(&u) == 0)
            {
                env.os = std::string(u.sysname) + " " + u.release;
                env.machine = u.machine;
                env.host = u.nodename;
            }
            std::ifstream osr("/etc/os-release");
            std::string line;
            while (std::getline(osr, line))
            {
                if (line.rfind("PRETTY_NAME=", 0) == 0)
                {
                    auto v = line.substr(12);
                    if (v.size() >= 2 && v.front() == '"')
                    {
                        v = v.substr(1, v.size() - 2);
                    }
                    env.os = v + " (" + env.os + ")";
                }
            }
            env.cpu_model = cpu_model();
            // the user's limit on the CUDA cache (the driver's, which NVRTC's cache shares): what a
            // kept cache holds at most
            if (const char* limit = std::getenv("CUDA_CACHE_MAXSIZE"))
            {
                env.cuda_cache_maxsize = limit;
                env.sources["cuda_cache_maxsize"] = "CUDA_CACHE_MAXSIZE";
            }
            env.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
            env.sources["os"] = "uname, /etc/os-release";
            env.sources["cpu_model"] = "/proc/cpuinfo";
#ifdef XWARP_HAVE_CUDA
            collect_cuda(env);
#else
            env.cuda_status = "warp-probe was built with XWARP_WITH_CUDA=OFF: CUDA facts not collected";
#endif
            return env;
        }

#ifdef XWARP_HAVE_CUDA
        using driver_cache_scope = private_compute_cache;
#else
        struct driver_cache_scope
        {
        };
#endif
    }

    environment collect_host_environment()
    {
        driver_cache_scope driver_cache;
        return collect_host_environment_as_set_up();
    }

    namespace
    {
        std::shared_future<environment>& host_facts()
        {
            static std::shared_future<environment> facts;
            return facts;
        }

        std::mutex& host_facts_lock()
        {
            static std::mutex m;
            return m;
        }

        // Set up by the thread that starts the query, dropped by the first that sees it done.
        std::unique_ptr<driver_cache_scope>& query_driver_cache()
        {
            static std::unique_ptr<driver_cache_scope> scope;
            return scope;
        }

        void drop_query_driver_cache() noexcept
        {
            std::lock_guard<std::mutex> lock(host_facts_lock());
            query_driver_cache().reset();
        }
    }

    void start_collecting_host_environment()
    {
        std::lock_guard<std::mutex> lock(host_facts_lock());
        if (!host_facts().valid())
        {
            query_driver_cache() = std::make_unique<driver_cache_scope>();
            host_facts() = std::async(std::launch::async, collect_host_environment_as_set_up).share();
        }
    }

    void finish_collecting_host_environment() noexcept
    {
        std::shared_future<environment> facts;
        {
            std::lock_guard<std::mutex> lock(host_facts_lock());
            facts = host_facts();
        }
        if (facts.valid())
        {
            facts.wait();
            drop_query_driver_cache();
        }
    }

    bool host_environment_being_collected()
    {
        std::lock_guard<std::mutex> lock(host_facts_lock());
        return host_facts().valid()
               && host_facts().wait_for(std::chrono::seconds(0)) != std::future_status::ready;
    }

    environment cached_host_environment()
    {
        start_collecting_host_environment();
        std::shared_future<environment> facts;
        {
            std::lock_guard<std::mutex> lock(host_facts_lock());
            facts = host_facts();
        }
        facts.wait();
        drop_query_driver_cache();
        return facts.get();
    }

    void merge_target_facts(environment& env, const run_result& pass)
    {
        for (const auto& p : pass.processes)
        {
            if (p.warp_version.empty())
            {
                continue;
            }
            env.warp_version = p.warp_version;
            env.python_version = p.python;
            env.python_executable = p.executable;
            env.sources["warp_version"] = "target process (shim)";
            env.sources["python_version"] = "target process (shim)";
            if (auto it = p.runtime.find("devices"); it != p.runtime.end() && it->is_array())
            {
                env.warp_devices = *it;
                env.sources["warp_devices"] = "target process (shim): Warp's runtime device list";
            }
            return;
        }
    }
}
