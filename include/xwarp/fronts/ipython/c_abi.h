/* The magics' C interface: what `%load_ext xwarp` in a stock IPython reaches through ctypes
   (src/fronts/python/xwarp/_engine.py), so that one library, linked against no Python, serves
   every CPython 3 (the wheel is py3-none, as warp-lang's is). Strings are UTF-8 and JSON where
   they carry structure; a string the library returns is the caller's to free with xwarp_free.
   Every call may come from any thread; a magic runs on the caller's thread and calls the host
   back on it. Version 1: a change that breaks a caller raises XWARP_C_ABI_VERSION. */
#ifndef XWARP_IPYTHON_C_ABI_H
#define XWARP_IPYTHON_C_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

#define XWARP_C_ABI_VERSION 1

/* How a magic ended. */
enum xwarp_magic_status
{
    XWARP_MAGIC_OK = 0,
    XWARP_MAGIC_USAGE_ERROR = 1,      /* bad options or input: the message is what to show */
    XWARP_MAGIC_EXPECTATION_NOT_MET = 2, /* --strict --expect: the run did not meet it */
    XWARP_MAGIC_PROGRAM_FAILED = 3,   /* the probed program failed in every sample */
    XWARP_MAGIC_INTERRUPTED = 4,      /* the host asked to stop: processes gone, files removed */
    XWARP_MAGIC_INTERNAL_ERROR = 5,   /* a bug: the message says what failed */
    XWARP_MAGIC_NO_SESSION = 6        /* xwarp_start_session was not called, or the name is unknown */
};

/* What the notebook gives a magic: the callbacks are called on the magic's thread. */
typedef struct xwarp_host
{
    void* context;
    const char* working_directory; /* the notebook's folder */
    const char* python_executable; /* the kernel's own Python */
    /* non-zero: stop the probe (polled while it runs) */
    int (*interrupt_requested)(void* context);
    /* show a MIME bundle (JSON); update non-zero: replace what display_id shows */
    void (*show)(void* context, const char* bundle_json, const char* display_id, int update);
    /* put a report (JSON) and its HTML into the user's namespace as `name` */
    void (*bind_variable)(void* context, const char* name, const char* report_json, const char* html);
} xwarp_host;

int xwarp_c_abi_version(void);
/* xwarp's version, static storage: never freed */
const char* xwarp_version(void);
/* The one session of this process (as in the xwarp kernel): a second call keeps the first
   session and its runs. Returns 0. */
int xwarp_start_session(const char* shim_dir, const char* guide_text, const char* exercises_text);
/* The magics: a JSON list of {"name", "kind": "line" | "cell" | "line_cell"}; free it. */
char* xwarp_magic_names(void);
/* Runs magic `name`; cell NULL runs it as a line magic. *message (may be NULL) receives what
   to show for a status other than OK: free it. */
int xwarp_run_magic(const char* name, const char* line, const char* cell, const xwarp_host* host, char** message);
void xwarp_free(char* text);

#ifdef __cplusplus
}
#endif

#endif
