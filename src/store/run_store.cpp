#include "xwarp/store/run_store.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include "xwarp/analysis/trend.hpp"
#include "xwarp/model/format.hpp"
#include "xwarp/model/json_io.hpp"

namespace xwarp
{
    namespace fs = std::filesystem;

    store_location locate_store(const std::string& option)
    {
        store_location where;
        auto decide = [&](const std::string& value, const std::string& origin)
        {
            where.origin = origin;
            if (value == "off")
            {
                where.off = true;
            }
            else
            {
                where.path = value;
            }
        };
        if (!option.empty())
        {
            decide(option, "--history");
        }
        else if (const char* env = std::getenv("XWARP_HISTORY"); env && *env)
        {
            decide(env, "XWARP_HISTORY");
        }
        else if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/')
        {
            decide(std::string(xdg) + "/xwarp/history.sqlite3", "XDG_DATA_HOME");
        }
        else if (const char* home = std::getenv("HOME"); home && *home == '/')
        {
            decide(std::string(home) + "/.local/share/xwarp/history.sqlite3", "HOME");
        }
        else
        {
            where.off = true;
            where.origin = "no HOME or XDG_DATA_HOME";
        }
        return where;
    }

    std::optional<std::int64_t> parse_stored_run_ref(const std::string& text)
    {
        if (text.size() < 2 || text[0] != '@' || text.size() > 19)
        {
            return std::nullopt;
        }
        std::int64_t id = 0;
        for (std::size_t i = 1; i < text.size(); ++i)
        {
            if (text[i] < '0' || text[i] > '9')
            {
                return std::nullopt;
            }
            id = id * 10 + (text[i] - '0');
        }
        return id > 0 ? std::optional<std::int64_t>(id) : std::nullopt;
    }

    namespace
    {
        // Schema migrations, applied in order inside one immediate transaction: entry i takes
        // the store from user_version i to i + 1.
        const char* const migrations[] = {
            R"sql(
            CREATE TABLE runs (
                id INTEGER PRIMARY KEY,
                digest TEXT NOT NULL UNIQUE,
                created_utc TEXT NOT NULL,
                stored_utc TEXT NOT NULL,
                kind TEXT NOT NULL,
                machine TEXT NOT NULL, cpu TEXT, gpu TEXT, driver TEXT, toolkit TEXT,
                warp TEXT, python TEXT, probe TEXT,
                command TEXT NOT NULL, label TEXT, git_commit TEXT,
                status TEXT, samples INTEGER,
                cold_module_ms REAL, cold_module_mad_ms REAL, cold_wall_ms REAL,
                identities INTEGER, builds INTEGER, whatif TEXT,
                report TEXT NOT NULL);
            CREATE INDEX runs_series ON runs (machine, command, created_utc);
            CREATE TABLE identities (
                run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                module TEXT NOT NULL, hash TEXT NOT NULL, device TEXT NOT NULL, block_dim INTEGER,
                builds INTEGER, ms REAL, kernels INTEGER, source_bytes INTEGER);
            CREATE INDEX identities_run ON identities (run_id);
            CREATE TABLE whatif (
                run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                lever TEXT NOT NULL, verdict TEXT, saving_ms REAL, judged_on TEXT, samples INTEGER);
            CREATE TABLE comparisons (
                id INTEGER PRIMARY KEY,
                stored_utc TEXT NOT NULL,
                before_run INTEGER REFERENCES runs (id),
                after_run INTEGER REFERENCES runs (id),
                verdict TEXT NOT NULL,
                comparison TEXT NOT NULL);
            )sql",
            R"sql(
            CREATE TABLE tests (
                run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                test TEXT NOT NULL, builds INTEGER, build_ms REAL, reused_by INTEGER);
            CREATE INDEX tests_run ON tests (run_id);
            )sql",
            // one line per identity the test built: module, device, hash, block_dim ("" none), ms,
            // tab-separated (NULL in rows stored before: what they built is not known)
            R"sql(
            ALTER TABLE tests ADD COLUMN built TEXT;
            )sql",
            R"sql(
            CREATE TABLE written (
                sha256 TEXT PRIMARY KEY,
                path TEXT NOT NULL,
                written_utc TEXT NOT NULL);
            )sql",
        };
        static_assert(sizeof(migrations) / sizeof(migrations[0]) == store_schema_version,
                      "one migration per schema version");

        constexpr int busy_timeout_ms = 15000;

        // What a test built, as the tests table keeps it: one identity a line.
        std::string built_lines(const std::vector<built_identity>& built)
        {
            std::string out;
            for (const auto& b : built)
            {
                out += b.module.str() + '\t' + b.device.str() + '\t' + b.hash + '\t'
                       + (b.block_dim ? std::to_string(*b.block_dim) : std::string()) + '\t' + format_fixed(b.ms, 1) + '\n';
            }
            return out;
        }

        std::vector<built_identity> parse_built_lines(const std::string& text)
        {
            std::vector<built_identity> out;
            std::size_t at = 0;
            while (at < text.size())
            {
                std::size_t end = text.find('\n', at);
                if (end == std::string::npos)
                {
                    end = text.size();
                }
                std::vector<std::string> f;
                std::size_t from = at;
                for (std::size_t i = at; i <= end; ++i)
                {
                    if (i == end || text[i] == '\t')
                    {
                        f.push_back(text.substr(from, i - from));
                        from = i + 1;
                    }
                }
                at = end + 1;
                if (f.size() != 5)
                {
                    continue;  // not a line this store wrote
                }
                built_identity b;
                b.module = f[0];
                b.device = f[1];
                b.hash = f[2];
                try
                {
                    if (!f[3].empty())
                    {
                        b.block_dim = std::stoi(f[3]);
                    }
                    b.ms = std::stod(f[4]);
                }
                catch (const std::exception&)
                {
                    continue;
                }
                out.push_back(std::move(b));
            }
            return out;
        }

        // A report's text (its compact JSON) is never held whole here: at 10,000 identities it
        // is 22 MB, and SQLite copied it once more into the row it wrote. It is written twice
        // instead, as write_report_json writes it: once to be digested and measured, once into
        // the row's blob, a block at a time.

        // FNV-1a, 64 bits, of what is written, and how many bytes: a store key for "this report
        // was stored already", not a security property (a collision only merges two runs' rows).
        class digesting_buffer : public std::streambuf
        {
        public:
            std::uint64_t hash = 1469598103934665603ULL;
            std::uint64_t bytes = 0;

        protected:
            int_type overflow(int_type c) override
            {
                if (!traits_type::eq_int_type(c, traits_type::eof()))
                {
                    add(traits_type::to_char_type(c));
                }
                return traits_type::not_eof(c);
            }
            std::streamsize xsputn(const char* s, std::streamsize n) override
            {
                for (std::streamsize i = 0; i < n; ++i)
                {
                    add(s[i]);
                }
                return n;
            }

        private:
            void add(char c)
            {
                hash ^= static_cast<unsigned char>(c);
                hash *= 1099511628211ULL;
                ++bytes;
            }
        };

        struct text_digest
        {
            std::string digest;  // 16 hex digits
            std::uint64_t bytes = 0;
        };

        text_digest digest_of(const report& r)
        {
            digesting_buffer text;
            std::ostream out(&text);
            write_report_json(out, r);
            char hex[17];
            std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(text.hash));
            return {hex, text.bytes};
        }

        // Writes into an open blob from its start, a block at a time; never past its end.
        class blob_buffer : public std::streambuf
        {
        public:
            explicit blob_buffer(sqlite3_blob* blob) : m_blob(blob), m_block(1 << 16)
            {
                setp(m_block.data(), m_block.data() + m_block.size());
            }
            // What is left in the block, into the blob; false when a write failed.
            bool finish()
            {
                return write_block();
            }
            std::uint64_t written() const { return m_offset; }

        protected:
            int_type overflow(int_type c) override
            {
                if (!write_block())
                {
                    return traits_type::eof();
                }
                if (!traits_type::eq_int_type(c, traits_type::eof()))
                {
                    *pptr() = traits_type::to_char_type(c);
                    pbump(1);
                }
                return traits_type::not_eof(c);
            }
            int sync() override { return write_block() ? 0 : -1; }

        private:
            bool write_block()
            {
                const auto n = static_cast<int>(pptr() - pbase());
                if (m_failed || (n > 0 && sqlite3_blob_write(m_blob, pbase(), n, static_cast<int>(m_offset)) != SQLITE_OK))
                {
                    m_failed = true;
                    return false;
                }
                m_offset += static_cast<std::uint64_t>(n);
                setp(m_block.data(), m_block.data() + m_block.size());
                return true;
            }

            sqlite3_blob* m_blob;
            std::vector<char> m_block;
            std::uint64_t m_offset = 0;
            bool m_failed = false;
        };

        bool is_corruption(const SQLite::Exception& e)
        {
            const int code = e.getErrorCode() & 0xff;
            return code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
        }

        // An exclusive lock on a sidecar file while the store is checked, moved aside or
        // created, so that two probes never move each other's fresh store away.
        class open_lock
        {
        public:
            // A reader takes the lock only where a writer made it: it moves nothing aside, and
            // leaves no file beside a store it only reads.
            open_lock(const std::string& path, bool reader)
            {
                fd_ = ::open((path + ".lock").c_str(), reader ? O_RDWR | O_CLOEXEC : O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                if (fd_ >= 0)
                {
                    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR)
                    {
                    }
                }
            }
            ~open_lock()
            {
                if (fd_ >= 0)
                {
                    ::close(fd_);
                }
            }
            open_lock(const open_lock&) = delete;
            open_lock& operator=(const open_lock&) = delete;

        private:
            int fd_ = -1;
        };

        std::string compact_utc()
        {
            std::string t = utc_timestamp();  // 2026-12-02T12:00:00Z
            std::string out;
            for (char c : t)
            {
                if (c != '-' && c != ':')
                {
                    out += c;
                }
            }
            return out;
        }

        std::string move_aside(const std::string& path, const std::string& why)
        {
            std::string target = path + "." + why + "-" + compact_utc();
            std::error_code ec;
            for (int n = 1; fs::exists(target, ec) && n < 100; ++n)
            {
                target = path + "." + why + "-" + compact_utc() + "-" + std::to_string(n);
            }
            fs::rename(path, target, ec);
            if (ec)
            {
                throw store_error("cannot move the history store " + path + " aside: " + ec.message());
            }
            for (const char* side : {"-wal", "-shm"})
            {
                std::error_code ignored;
                if (fs::exists(path + side, ignored))
                {
                    fs::rename(path + side, target + side, ignored);
                }
            }
            return target;
        }

        history_run run_from(SQLite::Statement& q)
        {
            // Columns as in run_columns below.
            history_run r;
            int c = 0;
            r.id = q.getColumn(c++).getInt64();
            r.created_utc = q.getColumn(c++).getString();
            r.stored_utc = q.getColumn(c++).getString();
            r.kind = q.getColumn(c++).getString();
            r.fp.machine = q.getColumn(c++).getString();
            r.fp.cpu = q.getColumn(c++).getString();
            r.fp.gpu = q.getColumn(c++).getString();
            r.fp.driver = q.getColumn(c++).getString();
            r.fp.toolkit = q.getColumn(c++).getString();
            r.fp.warp = q.getColumn(c++).getString();
            r.fp.python = q.getColumn(c++).getString();
            r.fp.probe = q.getColumn(c++).getString();
            r.fp.command = q.getColumn(c++).getString();
            r.fp.label = q.getColumn(c++).getString();
            r.fp.git_commit = q.getColumn(c++).getString();
            r.status = q.getColumn(c++).getString();
            r.samples = q.getColumn(c++).getInt();
            auto opt = [&](int col) -> std::optional<double>
            {
                auto v = q.getColumn(col);
                return v.isNull() ? std::nullopt : std::optional<double>(v.getDouble());
            };
            r.cold_module_ms = opt(c++);
            r.cold_module_mad_ms = opt(c++);
            r.cold_wall_ms = opt(c++);
            r.identities = q.getColumn(c++).getInt();
            r.builds = q.getColumn(c++).getInt();
            r.whatif = q.getColumn(c++).getString();
            return r;
        }

        const char* const run_columns =
            "id, created_utc, stored_utc, kind, machine, cpu, gpu, driver, toolkit, warp, python, probe, command, label, "
            "git_commit, status, samples, cold_module_ms, cold_module_mad_ms, cold_wall_ms, identities, builds, whatif";
    }

    run_store::run_store(const std::string& path, std::vector<std::string>* notes, store_access access)
        : path_(path), notes_(notes), reader_(access == store_access::read)
    {
        std::error_code ec;
        if (fs::is_directory(path, ec))
        {
            throw store_error("the history store " + path + " is a directory, not a store file", store_error::kind::missing);
        }
        if (reader_ && !fs::exists(path, ec))
        {
            throw store_error("no history store at " + path + " yet", store_error::kind::missing);
        }
        // /dev/null, a FIFO, a device: SQLite would write a journal and a lock beside it
        if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
        {
            throw store_error("the history store " + path + " is not a regular file: give --history a file's path",
                                store_error::kind::unreadable);
        }
        const fs::path folder = fs::path(path).parent_path();
        if (!folder.empty())
        {
            fs::create_directories(folder, ec);
            if (ec)
            {
                throw store_error("cannot create the history folder " + folder.string() + ": " + ec.message());
            }
        }
        open_or_move_aside(notes);
    }

    run_store::~run_store() = default;

    void run_store::open_or_move_aside(std::vector<std::string>* notes)
    {
        open_lock lock(path_, reader_);
        for (int attempt = 0; attempt < 2; ++attempt)
        {
            std::string problem;
            std::string why;
            try
            {
                if (reader_)
                {
                    open_for_reading();
                    const int version = db_->execAndGet("PRAGMA user_version").getInt();
                    if (version > store_schema_version)
                    {
                        throw store_error("the history store " + path_ + " was written by a newer xwarp (store schema "
                                                + std::to_string(version) + ", this one reads "
                                                + std::to_string(store_schema_version) + "): left as it is",
                                            store_error::kind::unreadable);
                    }
                    if (version == store_schema_version)
                    {
                        return;
                    }
                    db_.reset();  // an older schema: migrated below, as a writer would (where it can be written)
                }
                db_ = std::make_unique<SQLite::Database>(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                                                         busy_timeout_ms);
                const int version = db_->execAndGet("PRAGMA user_version").getInt();
                if (version > store_schema_version)
                {
                    problem = "was written by a newer xwarp (store schema " + std::to_string(version) + ", this one reads "
                              + std::to_string(store_schema_version) + ")";
                    why = "newer";
                }
                else
                {
                    db_->exec("PRAGMA journal_mode = WAL");
                    db_->exec("PRAGMA foreign_keys = ON");
                    // A run's row is written in one transaction, its report's text (22 MB at
                    // 10,000 identities) among it: SQLite's default 2 MB page cache filled with
                    // those pages before spilling them to the WAL (1.8 MB of the 28.8 MB peak of
                    // storing a 10,000-identity report). Its queries read a few rows each.
                    db_->exec("PRAGMA cache_size = -256");  // KiB
                    if (version < store_schema_version)
                    {
                        SQLite::Transaction t(*db_, SQLite::TransactionBehavior::IMMEDIATE);
                        // Another process may have migrated it while this one waited.
                        int now = db_->execAndGet("PRAGMA user_version").getInt();
                        for (; now < store_schema_version; ++now)
                        {
                            db_->exec(migrations[now]);
                        }
                        db_->exec("PRAGMA user_version = " + std::to_string(store_schema_version));
                        t.commit();
                    }
                    // Pages damaged past the header show up when they are read: guarded()
                    // moves the store aside then (a full check here would read the whole file).
                    return;
                }
            }
            catch (const SQLite::Exception& e)
            {
                if (!is_corruption(e))
                {
                    db_.reset();
                    throw store_error("cannot open the history store " + path_ + ": " + e.what());
                }
                problem = std::string("is not a readable store (") + e.what() + ")";
                why = "corrupt";
            }
            db_.reset();
            if (reader_)
            {
                // only a writer may move a store aside: the xwarp that wrote it still reads it
                throw store_error("the history store " + path_ + " " + problem + ": left as it is",
                                    store_error::kind::unreadable);
            }
            if (attempt == 1)
            {
                break;
            }
            const std::string aside = move_aside(path_, why);
            if (notes)
            {
                notes->push_back("the history store " + path_ + " " + problem + ": moved aside to " + aside
                                 + "; a new store was started");
            }
        }
        throw store_error("cannot start a new history store at " + path_);
    }

    // A reading command opens the store read-only: no journal, no lock, no change to a file it
    // only reads, and a store on a read-only filesystem still reads.
    void run_store::open_for_reading()
    {
        // With a write-ahead log beside it a writer is at work (or left it): its pages are read
        // through the log, which needs SQLite's shared-memory file. Without one, the file alone
        // is the store, read as immutable: nothing is created or changed beside it.
        std::error_code ec;
        if (fs::exists(path_ + "-wal", ec))
        {
            try
            {
                db_ = std::make_unique<SQLite::Database>(path_, SQLite::OPEN_READONLY, busy_timeout_ms);
                db_->execAndGet("PRAGMA user_version");
                return;
            }
            catch (const SQLite::Exception& e)
            {
                db_.reset();
                const int code = e.getErrorCode() & 0xff;
                if (code != SQLITE_CANTOPEN && code != SQLITE_READONLY && code != SQLITE_IOERR)
                {
                    throw;
                }
            }
        }
        std::string uri = "file:";
        for (const unsigned char c : path_)
        {
            static const char* hex = "0123456789ABCDEF";
            if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~')
            {
                uri += static_cast<char>(c);
            }
            else
            {
                uri += '%';
                uri += hex[c >> 4];
                uri += hex[c & 0xF];
            }
        }
        db_ = std::make_unique<SQLite::Database>(uri + "?immutable=1", SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                                                 busy_timeout_ms);
    }

    template <typename F>
    auto run_store::guarded(F&& f) -> decltype(f())
    {
        try
        {
            return f();
        }
        catch (const SQLite::Exception& e)
        {
            if (!is_corruption(e))
            {
                throw store_error(std::string("history store ") + path_ + ": " + e.what());
            }
        }
        // Damaged since it was opened: move it aside and retry once on a fresh store (a reader
        // says so instead).
        if (reader_)
        {
            throw store_error("the history store " + path_ + " is damaged: left as it is", store_error::kind::unreadable);
        }
        db_.reset();
        {
            // its header still opens: moved aside here, or the next open would take the same
            // damaged file again and every later run would go unstored
            open_lock lock(path_, reader_);
            const std::string aside = move_aside(path_, "corrupt");
            if (notes_)
            {
                notes_->push_back("the history store " + path_ + " has damaged pages: moved aside to " + aside
                                  + "; a new store was started");
            }
        }
        open_or_move_aside(notes_);
        try
        {
            return f();
        }
        catch (const SQLite::Exception& e)
        {
            throw store_error(std::string("history store ") + path_ + ": " + e.what());
        }
    }

    std::int64_t run_store::add_report(const report& r, run_kind kind)
    {
        const text_digest text = digest_of(r);
        const std::string& digest = text.digest;
        const history_run row = run_row_of(r, kind);
        return guarded(
            [&]() -> std::int64_t
            {
                SQLite::Transaction t(*db_, SQLite::TransactionBehavior::IMMEDIATE);
                {
                    SQLite::Statement have(*db_, "SELECT id FROM runs WHERE digest = ?");
                    have.bind(1, digest);
                    if (have.executeStep())
                    {
                        return have.getColumn(0).getInt64();
                    }
                }
                SQLite::Statement ins(*db_,
                                      "INSERT INTO runs (digest, created_utc, stored_utc, kind, machine, cpu, gpu, driver, "
                                      "toolkit, warp, python, probe, command, label, git_commit, status, samples, "
                                      "cold_module_ms, cold_module_mad_ms, cold_wall_ms, identities, builds, whatif, report) "
                                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,zeroblob(?))");
                int c = 1;
                ins.bind(c++, digest);
                ins.bind(c++, row.created_utc.empty() ? utc_timestamp() : row.created_utc);
                ins.bind(c++, utc_timestamp());
                ins.bind(c++, word_of(kind));
                for (const std::string* s : {&row.fp.machine, &row.fp.cpu, &row.fp.gpu, &row.fp.driver, &row.fp.toolkit,
                                             &row.fp.warp, &row.fp.python, &row.fp.probe, &row.fp.command, &row.fp.label,
                                             &row.fp.git_commit, &row.status})
                {
                    ins.bind(c++, *s);
                }
                ins.bind(c++, row.samples);
                for (const auto& v : {row.cold_module_ms, row.cold_module_mad_ms, row.cold_wall_ms})
                {
                    if (v)
                    {
                        ins.bind(c++, *v);
                    }
                    else
                    {
                        ins.bind(c++);
                    }
                }
                ins.bind(c++, row.identities);
                ins.bind(c++, row.builds);
                ins.bind(c++, row.whatif);
                ins.bind(c++, static_cast<std::int64_t>(text.bytes));  // room for the text, written below
                ins.exec();
                const std::int64_t id = db_->getLastInsertRowid();
                {
                    sqlite3_blob* blob = nullptr;
                    if (const int rc = sqlite3_blob_open(db_->getHandle(), "main", "runs", "report", id, 1, &blob))
                    {
                        throw SQLite::Exception(db_->getHandle(), rc);
                    }
                    blob_buffer into(blob);
                    std::ostream out(&into);
                    write_report_json(out, r);
                    const bool whole = out.flush() && into.finish() && into.written() == text.bytes;
                    sqlite3_blob_close(blob);
                    if (!whole)
                    {
                        // the transaction is rolled back: no row is left half written
                        throw store_error("the report's text could not be written into the history store " + path_);
                    }
                }
                SQLite::Statement id_row(*db_,
                                         "INSERT INTO identities (run_id, module, hash, device, block_dim, builds, ms, kernels, "
                                         "source_bytes) VALUES (?,?,?,?,?,?,?,?,?)");
                for_each_identity_row(r, [&](const history_identity& i)
                {
                    id_row.bind(1, id);
                    id_row.bind(2, i.module);
                    id_row.bind(3, i.hash);
                    id_row.bind(4, i.device);
                    if (i.block_dim)
                    {
                        id_row.bind(5, *i.block_dim);
                    }
                    else
                    {
                        id_row.bind(5);
                    }
                    id_row.bind(6, i.builds);
                    id_row.bind(7, i.ms);
                    id_row.bind(8, i.kernels);
                    id_row.bind(9, i.source_bytes);
                    id_row.exec();
                    id_row.reset();
                });
                SQLite::Statement t_row(*db_, "INSERT INTO tests (run_id, test, builds, build_ms, reused_by, built) "
                                              "VALUES (?,?,?,?,?,?)");
                for (const auto& t : r.result.tests)
                {
                    t_row.bind(1, id);
                    t_row.bind(2, t.test);
                    t_row.bind(3, t.builds);
                    t_row.bind(4, t.build_ms);
                    t_row.bind(5, t.reused_by);
                    t_row.bind(6, built_lines(t.identities));
                    t_row.exec();
                    t_row.reset();
                }
                SQLite::Statement w_row(*db_, "INSERT INTO whatif (run_id, lever, verdict, saving_ms, judged_on, samples) "
                                              "VALUES (?,?,?,?,?,?)");
                for (const auto& w : r.whatif)
                {
                    w_row.bind(1, id);
                    w_row.bind(2, w.lever);
                    w_row.bind(3, word_of(w.verdict));
                    // the saving on the clock the replay was judged on, and that clock's word
                    const auto saving = w.quoted_saving();
                    if (saving)
                    {
                        w_row.bind(4, *saving);
                    }
                    else
                    {
                        w_row.bind(4);
                    }
                    w_row.bind(5, word_of(w.judged_on.by));
                    w_row.bind(6, w.samples);
                    w_row.exec();
                    w_row.reset();
                }
                t.commit();
                return id;
            });
    }

    std::int64_t run_store::add_comparison(std::int64_t before_run, std::int64_t after_run, const std::string& verdict,
                                               const std::string& comparison_json)
    {
        return guarded(
            [&]() -> std::int64_t
            {
                SQLite::Statement ins(*db_, "INSERT INTO comparisons (stored_utc, before_run, after_run, verdict, comparison) "
                                            "VALUES (?,?,?,?,?)");
                ins.bind(1, utc_timestamp());
                ins.bind(2, before_run);
                ins.bind(3, after_run);
                ins.bind(4, verdict);
                ins.bindNoCopy(5, comparison_json);  // the caller's text outlives the insert: not copied
                ins.exec();
                return db_->getLastInsertRowid();
            });
    }

    std::vector<history_run> run_store::runs(const history_filter& f)
    {
        return guarded(
            [&]()
            {
                std::string sql = std::string("SELECT ") + run_columns + " FROM runs WHERE 1=1";
                if (!f.label.empty())
                {
                    sql += " AND label = :label";
                }
                if (!f.command.empty())
                {
                    sql += " AND instr(command, :command) > 0";
                }
                if (!f.machine.empty())
                {
                    sql += " AND machine = :machine";
                }
                if (f.kind)
                {
                    sql += " AND kind = :kind";
                }
                sql += " ORDER BY id DESC";
                if (f.limit > 0)
                {
                    sql += " LIMIT " + std::to_string(f.limit);
                }
                SQLite::Statement q(*db_, sql);
                if (!f.label.empty())
                {
                    q.bind(":label", f.label);
                }
                if (!f.command.empty())
                {
                    q.bind(":command", f.command);
                }
                if (!f.machine.empty())
                {
                    q.bind(":machine", f.machine);
                }
                if (f.kind)
                {
                    q.bind(":kind", word_of(*f.kind));
                }
                std::vector<history_run> out;
                while (q.executeStep())
                {
                    out.push_back(run_from(q));
                }
                return out;
            });
    }

    std::optional<history_run> run_store::run(std::int64_t id)
    {
        return guarded(
            [&]() -> std::optional<history_run>
            {
                SQLite::Statement q(*db_, std::string("SELECT ") + run_columns + " FROM runs WHERE id = ?");
                q.bind(1, id);
                if (q.executeStep())
                {
                    return run_from(q);
                }
                return std::nullopt;
            });
    }

    std::vector<history_identity> run_store::identities(std::int64_t run_id)
    {
        return guarded(
            [&]()
            {
                SQLite::Statement q(*db_, "SELECT module, hash, device, block_dim, builds, ms, kernels, source_bytes "
                                          "FROM identities WHERE run_id = ? ORDER BY ms DESC");
                q.bind(1, run_id);
                std::vector<history_identity> out;
                while (q.executeStep())
                {
                    history_identity i;
                    i.module = q.getColumn(0).getString();
                    i.hash = q.getColumn(1).getString();
                    i.device = q.getColumn(2).getString();
                    if (!q.getColumn(3).isNull())
                    {
                        i.block_dim = q.getColumn(3).getInt();
                    }
                    i.builds = q.getColumn(4).getInt();
                    i.ms = q.getColumn(5).getDouble();
                    i.kernels = q.getColumn(6).getInt();
                    i.source_bytes = q.getColumn(7).getInt64();
                    out.push_back(std::move(i));
                }
                return out;
            });
    }

    std::vector<test_cost> run_store::tests(std::int64_t run_id)
    {
        return guarded(
            [&]()
            {
                SQLite::Statement q(*db_, "SELECT test, builds, build_ms, reused_by, built FROM tests WHERE run_id = ? "
                                          "ORDER BY build_ms DESC");
                q.bind(1, run_id);
                std::vector<test_cost> out;
                while (q.executeStep())
                {
                    test_cost t;
                    t.test = q.getColumn(0).getString();
                    t.builds = q.getColumn(1).getInt();
                    t.build_ms = q.getColumn(2).getDouble();
                    t.reused_by = q.getColumn(3).getInt();
                    t.identities_known = !q.getColumn(4).isNull();
                    if (t.identities_known)
                    {
                        t.identities = parse_built_lines(q.getColumn(4).getString());
                    }
                    out.push_back(std::move(t));
                }
                return out;
            });
    }

    std::vector<history_replay> run_store::replays(std::int64_t run_id)
    {
        return guarded(
            [&]()
            {
                SQLite::Statement q(*db_, "SELECT lever, verdict, saving_ms, judged_on, samples FROM whatif WHERE run_id = ? "
                                          "ORDER BY rowid");
                q.bind(1, run_id);
                std::vector<history_replay> out;
                while (q.executeStep())
                {
                    history_replay w;
                    w.lever = q.getColumn(0).getString();
                    w.verdict = member_named<verdict>(q.getColumn(1).getString()).value_or(verdict::not_run);
                    if (!q.getColumn(2).isNull())
                    {
                        w.saving_ms = q.getColumn(2).getDouble();
                    }
                    // the clock's word; a row stored before it was one holds the judged_on sentence
                    const std::string clock_text = q.getColumn(3).getString();
                    w.clock = member_named<xwarp::clock>(clock_text);
                    if (!w.clock)
                    {
                        w.clock = clock_named_in(clock_text);
                    }
                    w.samples = q.getColumn(4).getInt();
                    out.push_back(std::move(w));
                }
                return out;
            });
    }

    void run_store::note_written(const std::string& sha256, const std::string& path)
    {
        guarded(
            [&]()
            {
                SQLite::Statement ins(*db_, "INSERT OR REPLACE INTO written (sha256, path, written_utc) VALUES (?,?,?)");
                ins.bind(1, sha256);
                ins.bind(2, path);
                ins.bind(3, utc_timestamp());
                ins.exec();
                return 0;
            });
    }

    bool run_store::wrote(const std::string& sha256)
    {
        return guarded(
            [&]()
            {
                SQLite::Statement q(*db_, "SELECT 1 FROM written WHERE sha256 = ?");
                q.bind(1, sha256);
                return q.executeStep();
            });
    }

    std::optional<run_kind> run_store::kind_of(std::int64_t run_id)
    {
        return guarded(
            [&]() -> std::optional<run_kind>
            {
                SQLite::Statement q(*db_, "SELECT kind FROM runs WHERE id = ?");
                q.bind(1, run_id);
                if (!q.executeStep())
                {
                    return std::nullopt;
                }
                return member_named<run_kind>(q.getColumn(0).getString());
            });
    }

    std::string run_store::report_json(std::int64_t run_id)
    {
        return guarded(
            [&]()
            {
                SQLite::Statement q(*db_, "SELECT report FROM runs WHERE id = ?");
                q.bind(1, run_id);
                if (!q.executeStep())
                {
                    throw store_error("no run @" + std::to_string(run_id) + " in the history store " + path_);
                }
                return q.getColumn(0).getString();
            });
    }

    std::optional<std::int64_t> run_store::find(const report& r)
    {
        const std::string digest = digest_of(r).digest;
        return guarded(
            [&]() -> std::optional<std::int64_t>
            {
                SQLite::Statement q(*db_, "SELECT id FROM runs WHERE digest = ?");
                q.bind(1, digest);
                if (q.executeStep())
                {
                    return q.getColumn(0).getInt64();
                }
                return std::nullopt;
            });
    }


    std::vector<history_comparison> run_store::comparisons(int limit)
    {
        return guarded(
            [&]()
            {
                SQLite::Statement q(*db_, "SELECT id, before_run, after_run, verdict, stored_utc FROM comparisons "
                                          "ORDER BY id DESC LIMIT ?");
                q.bind(1, limit > 0 ? limit : -1);
                std::vector<history_comparison> out;
                while (q.executeStep())
                {
                    history_comparison c;
                    c.id = q.getColumn(0).getInt64();
                    c.before_run = q.getColumn(1).getInt64();
                    c.after_run = q.getColumn(2).getInt64();
                    c.verdict = q.getColumn(3).getString();
                    c.stored_utc = q.getColumn(4).getString();
                    out.push_back(c);
                }
                return out;
            });
    }

    std::vector<history_run> run_store::series(const std::string& machine, const std::string& command)
    {
        return guarded(
            [&]()
            {
                SQLite::Statement q(*db_, std::string("SELECT ") + run_columns
                                              + " FROM runs WHERE machine = ? AND command = ? ORDER BY created_utc, id");
                q.bind(1, machine);
                q.bind(2, command);
                std::vector<history_run> out;
                while (q.executeStep())
                {
                    out.push_back(run_from(q));
                }
                return out;
            });
    }

    std::vector<history_run> run_store::latest_per_machine(const std::string& command)
    {
        return guarded(
            [&]()
            {
                // The newest run per machine: the largest (created_utc, id) of each.
                SQLite::Statement q(*db_, std::string("SELECT ") + run_columns
                                              + " FROM runs AS r WHERE command = ?1 AND NOT EXISTS ("
                                                "SELECT 1 FROM runs AS n WHERE n.command = ?1 AND n.machine = r.machine AND "
                                                "(n.created_utc > r.created_utc OR (n.created_utc = r.created_utc AND n.id > r.id))"
                                                ") ORDER BY machine");
                q.bind(1, command);
                std::vector<history_run> out;
                while (q.executeStep())
                {
                    out.push_back(run_from(q));
                }
                return out;
            });
    }

    std::optional<std::int64_t> remember_run(const store_location& where, const report& r, run_kind kind,
                                             std::vector<std::string>& notes)
    {
        if (where.off || where.path.empty())
        {
            return std::nullopt;
        }
        try
        {
            run_store store(where.path, &notes);
            return store.add_report(r, kind);
        }
        catch (const std::exception& e)
        {
            notes.push_back(std::string("the run was not stored in the history: ") + e.what());
        }
        return std::nullopt;
    }

    std::optional<run_series> series_for(const store_location& where, const report& r, std::vector<std::string>& notes)
    {
        std::error_code ec;
        if (where.off || where.path.empty() || !fs::exists(where.path, ec))
        {
            return std::nullopt;
        }
        try
        {
            run_store store(where.path, &notes, store_access::read);
            const fingerprint fp = fingerprint_of(r);
            auto runs = store.series(fp.machine, fp.command);
            if (runs.size() < 2)
            {
                return std::nullopt;
            }
            run_series view;
            view.store = where.path;
            // Which row is this report: its time of measurement names it when one row of the
            // series has it; only a tie (a run stored again with replays) needs the digest of
            // the whole report, which costs as much as writing it out (seconds, and several
            // times its size in memory, for 10,000 identities).
            std::vector<std::int64_t> same_time;
            for (const auto& run : runs)
            {
                if (!r.created_utc.empty() && run.created_utc == r.created_utc)
                {
                    same_time.push_back(run.id);
                }
            }
            view.this_run = same_time.size() == 1 ? same_time.front() : same_time.empty() ? 0 : store.find(r).value_or(0);
            std::vector<std::vector<history_identity>> rows;
            rows.reserve(runs.size());
            for (const auto& run : runs)
            {
                rows.push_back(store.identities(run.id));
            }
            view.trend = build_trend(runs, rows);
            return view;
        }
        catch (const std::exception& e)
        {
            notes.push_back(std::string("the history could not be read: ") + e.what());
        }
        return std::nullopt;
    }
}
