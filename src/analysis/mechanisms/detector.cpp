// Helpers every detector shares, and the churn grouping of the six churn mechanisms.
#include "detector.hpp"

#include <algorithm>
#include <map>

#include "xwarp/analysis/stats.hpp"
#include "xwarp/model/format.hpp"

namespace xwarp::detect
{
    using nlohmann::json;

    finding make_finding(const std::string& mechanism, shared_text module, const std::string& device)
    {
        finding f;
        f.mechanism = mechanism;
        f.module = std::move(module);
        f.device = device;
        if (const auto* m = find_mechanism(mechanism))
        {
            f.title = m->title;
            f.kind = m->kind;
            f.guide = m->guide;
            f.lever = m->lever;
        }
        else
        {
            f.title = mechanism;
        }
        return f;
    }

    declined_lever make_declined(const std::string& mechanism, const std::string& module, const std::string& device)
    {
        declined_lever d;
        d.mechanism = mechanism;
        d.module = module;
        d.device = device;
        if (const auto* m = find_mechanism(mechanism))
        {
            d.lever = m->lever;
        }
        return d;
    }

    void add_location(finding& f, const std::optional<std::string>& file, const std::optional<int>& line,
                      const std::string& what)
    {
        if (!file || !line || file->empty())
        {
            return;
        }
        for (const auto& l : f.locations)
        {
            if (l.file == *file && l.line == *line && l.what == what)
            {
                return;
            }
        }
        f.locations.push_back({*file, *line, what});
        if (!f.location)
        {
            f.location = source_location{*file, *line};
        }
    }

    namespace
    {
        // A separator before every part but while nothing is written yet (parts that are empty
        // at the start add none), as the lists in findings always read. Sized first: a
        // list of every module of a large report is a megabyte.
        template <class Parts>
        std::string join_parts(const Parts& v, const std::string& sep)
        {
            std::size_t size = 0;
            for (const auto& x : v)
            {
                size += x.size() + sep.size();
            }
            std::string s;
            s.reserve(size);
            for (const auto& x : v)
            {
                if (!s.empty())
                {
                    s += sep;
                }
                s += x;
            }
            return s;
        }
    }

    std::string join(const std::vector<std::string>& v, const std::string& sep)
    {
        return join_parts(v, sep);
    }

    std::string join(const std::vector<std::string_view>& v, const std::string& sep)
    {
        return join_parts(v, sep);
    }

    std::string join_first(const std::vector<std::string>& v, const std::string& sep, std::size_t shown)
    {
        if (v.size() <= shown)
        {
            return join_parts(v, sep);
        }
        std::vector<std::string> first(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(shown));
        return join_parts(first, sep) + sep + "and " + std::to_string(v.size() - shown) + " more";
    }


    std::pair<std::vector<dirty_event>::const_iterator, std::vector<dirty_event>::const_iterator>
    dirty_events_between(const process_record& p, std::int64_t after_seq, std::int64_t before_seq)
    {
        const auto by_seq = [](const dirty_event& d, std::int64_t seq) { return d.seq < seq; };
        auto first = std::lower_bound(p.dirty_events.begin(), p.dirty_events.end(), after_seq + 1, by_seq);
        auto last = std::lower_bound(first, p.dirty_events.end(), before_seq, by_seq);
        return {first, last};
    }

    const process_record* process_of(const run_result& run, std::int64_t pid)
    {
        for (const auto& p : run.processes)
        {
            if (p.pid == pid)
            {
                return &p;
            }
        }
        return nullptr;
    }

    double removable(const module_load& l, xwarp::clock on, bool header_kept)
    {
        if (l.status != load_status::compiled)
        {
            return l.cost_ms(on);  // a cached reload is removed whole
        }
        double ms = l.cost_ms(on);
        if (header_kept)
        {
            ms -= std::min(l.header_cost_ms(on), ms);
        }
        return ms;
    }

    bool sets_module_option(const api_call_event& c, const std::string& key)
    {
        const auto options = c.args.find("options");
        return c.function == "set_module_options" && options != c.args.end() && options->is_object()
               && options->contains(key);
    }

    std::set<std::string> definitions(const content_snapshot& s)
    {
        std::set<std::string> out;
        for (const auto& k : s.kernels)
        {
            out.insert(k.generic ? k.key + "|generic" : k.key + "|" + k.hash);
        }
        return out;
    }

    namespace
    {
        std::string short_value(const json& v)
        {
            std::string s = v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump(-1, ' ', false, json::error_handler_t::replace);
            return s.size() > 120 ? s.substr(0, 117) + "..." : s;
        }

        std::optional<json> value_in(const run_result* run, const std::string& config_key, const std::string& env_name)
        {
            if (!run)
            {
                return std::nullopt;
            }
            for (const auto& p : run->processes)
            {
                for (const auto& c : p.config_sets)
                {
                    if (!config_key.empty() && c.key == config_key)
                    {
                        return c.new_value;
                    }
                }
                for (const auto& c : p.calls)
                {
                    if (!env_name.empty() && c.function == "environ" && field_or(c.args, "name", json()) == env_name)
                    {
                        return field_or(c.args, "value", json());
                    }
                }
            }
            return std::nullopt;
        }
    }

    std::vector<cache_cause> cache_causes(const run_result& run, const run_result* other)
    {
        std::vector<cache_cause> out;
        auto add = [&](cache_cause c)
        {
            for (const auto& x : out)
            {
                if (x.kind == c.kind && x.file == c.file && x.line == c.line)
                {
                    return;
                }
            }
            out.push_back(std::move(c));
        };
        auto per_run = [&](const json& value, const std::optional<json>& in_other)
        {
            return in_other && *in_other != value ? " (a new directory each run: the other pass used "
                                                        + short_value(*in_other) + ")"
                                                  : std::string();
        };
        for (const auto& p : run.processes)
        {
            for (const auto& c : p.calls)
            {
                if (c.function == "clear_kernel_cache")
                {
                    add({c.function, "wp.clear_kernel_cache() throws Warp's kernel cache away", c.file, c.line, p.pid, c.seq});
                }
                else if (c.function == "clear_lto_cache")
                {
                    add({c.function, "wp.clear_lto_cache() throws the MathDx LTO cache away", c.file, c.line, p.pid, c.seq});
                }
                else if (c.function == "environ")
                {
                    const std::string name = field_or(c.args, "name", std::string());
                    const json value = field_or(c.args, "value", json());
                    const bool inherited = field_or(c.args, "inherited", false);
                    const std::string where = inherited ? name + "=" + (value.is_string() ? value.get<std::string>() : value.dump())
                                                              + " in the command's environment"
                                                        : "os.environ[\"" + name + "\"] = " + short_value(value);
                    if (name == "CUDA_CACHE_DISABLE" && value.is_string() && value.get<std::string>() != "0"
                        && !value.get<std::string>().empty())
                    {
                        add({"env:" + name, where + " turns the CUDA driver's compute cache off", c.file, c.line, p.pid, c.seq});
                    }
                    else if ((name == "CUDA_CACHE_PATH" || name == "WARP_CACHE_PATH") && !inherited)
                    {
                        add({"env:" + name, where + " moves the cache" + per_run(value, value_in(other, "", name)), c.file,
                             c.line, p.pid, c.seq});
                    }
                }
            }
            for (const auto& c : p.config_sets)
            {
                if (c.key == "cache_kernels" && c.new_value == false)
                {
                    add({c.key, "wp.config.cache_kernels = False keeps no module in the cache", c.file, c.line, p.pid, c.seq});
                }
                else if (c.key == "verify_autograd_array_access" && c.new_value == true)
                {
                    add({c.key, "wp.config.verify_autograd_array_access = True rebuilds modules at every load", c.file,
                         c.line, p.pid, c.seq});
                }
                else if (c.key == "kernel_cache_dir")
                {
                    add({c.key, "wp.config.kernel_cache_dir = " + short_value(c.new_value) + " moves the kernel cache"
                                    + per_run(c.new_value, value_in(other, c.key, "")),
                         c.file, c.line, p.pid, c.seq});
                }
            }
        }
        return out;
    }

    namespace
    {
        // The dirtying event between two loads of a module that matches the mechanism.
        const dirty_event* dirty_between(const process_record* p,
                                         const std::string& module,
                                         std::int64_t after_seq,
                                         std::int64_t before_seq,
                                         const std::vector<std::string>& triggers)
        {
            if (!p)
            {
                return nullptr;
            }
            const dirty_event* any = nullptr;
            const auto [first, last] = dirty_events_between(*p, after_seq, before_seq);
            for (auto it = first; it != last; ++it)
            {
                const dirty_event& d = *it;
                if (d.module != module)
                {
                    continue;
                }
                if (std::find(triggers.begin(), triggers.end(), d.trigger) != triggers.end())
                {
                    return &d;
                }
                if (!any)
                {
                    any = &d;
                }
            }
            return triggers.empty() ? any : nullptr;
        }

        std::string dump_value(const json& v)
        {
            return v.dump(-1, ' ', false, json::error_handler_t::replace);
        }

        // What one classified move changed, in words.
        std::vector<std::string> change_words(change_kind kind, const json& detail)
        {
            std::vector<std::string> what;
            static const json no_detail = json::object();
            const json& d = detail.is_object() ? detail : no_detail;
            auto strings = [&](const char* key)
            {
                std::vector<std::string> out;
                auto it = d.find(key);
                if (it != d.end() && it->is_array())
                {
                    for (const auto& x : *it)
                    {
                        if (x.is_string())
                        {
                            out.push_back(x.get<std::string>());
                        }
                    }
                }
                return out;
            };
            auto instance_words = [&]
            {
                auto it = d.find(kind == change_kind::generic_instance ? "instances" : "generic_instances");
                if (it != d.end() && it->is_array())
                {
                    for (const auto& i : *it)
                    {
                        if (i.is_object())
                        {
                            what.push_back("generic " + field_or(i, "kernel", std::string("?")) + " instantiated for ("
                                           + field_or(i, "signature", std::string("?")) + ")");
                        }
                    }
                }
            };
            if (kind == change_kind::kernel_set)
            {
                for (const auto& k : strings("added"))
                {
                    what.push_back("kernel " + k + " added");
                }
                for (const auto& k : strings("removed"))
                {
                    what.push_back("kernel " + k + " gone");
                }
                instance_words();
            }
            else if (kind == change_kind::kernel_instances_added)
            {
                what.push_back("new instance(s) of " + field_or(d, "kernel", std::string("?"))
                               + " with different captured values (a kernel factory)");
            }
            else if (kind == change_kind::kernel_content)
            {
                what.push_back("kernel(s) " + join(strings("kernels")) + " redefined with new content");
            }
            else if (kind == change_kind::option)
            {
                const json options = field_or(d, "options", json::object());
                for (const auto& [k, v] : options.items())
                {
                    what.push_back("option " + k + " " + dump_value(field_or(v, "old", json())) + " -> "
                                   + dump_value(field_or(v, "new", json())));
                }
            }
            else if (kind == change_kind::generic_instance)
            {
                instance_words();
            }
            else if (kind == change_kind::dependency)
            {
                what.push_back("function(s) " + join(strings("functions")) + " changed");
            }
            else  // unknown
            {
                what.push_back(field_or(d, "why", std::string("no recorded difference")));
            }
            return what;
        }
    }

    namespace
    {
        json nullable_text(const std::optional<std::string>& v)
        {
            return v ? json(*v) : json();
        }
    }

    std::vector<late_creation> created_after_first_load(const run_result& run, const std::vector<std::string_view>& modules)
    {
        const std::set<std::string_view> wanted(modules.begin(), modules.end());
        std::map<std::int64_t, std::int64_t> first_load;  // pid -> seq of the group's first load
        for (const auto& l : run.module_loads)
        {
            if (wanted.count(std::string_view(l.module)))
            {
                auto [at, added] = first_load.try_emplace(l.pid, l.seq);
                at->second = added ? l.seq : std::min(at->second, l.seq);
            }
        }
        std::vector<late_creation> late;
        for (const auto& p : run.processes)
        {
            const auto first = first_load.find(p.pid);
            if (first == first_load.end())
            {
                continue;
            }
            for (const auto& c : p.calls)  // a kernel's declaration names its final module (unique ones too)
            {
                const std::string module = c.function == "kernel" ? field_or(c.args, "module", std::string()) : "";
                if (c.seq <= first->second || !wanted.count(std::string_view(module)))
                {
                    continue;
                }
                late_creation lc{module, c.file, c.line};
                const json called = field_or(c.args, "called_from", json());
                if (called.is_object() && called.contains("file") && called.contains("line"))
                {
                    lc.file = field_or(called, "file", std::string());
                    lc.line = field_or(called, "line", 0);
                }
                for (const auto& frame : field_or(c.args, "called_stack", json::array()))
                {
                    if (frame.is_array() && frame.size() == 2 && frame[0].is_string() && frame[1].is_number_integer())
                    {
                        lc.stack.push_back({{"file", frame[0]}, {"line", frame[1]}});
                    }
                }
                late.push_back(std::move(lc));
            }
            for (const auto& m : p.modules_created)
            {
                if (m.seq > first->second && wanted.count(std::string_view(m.module))
                    && std::none_of(late.begin(), late.end(), [&](const late_creation& x) { return x.module == m.module; }))
                {
                    late.push_back({m.module, m.file, m.line});
                }
            }
        }
        return late;
    }

    void note_created_between_launches(finding& f, const std::vector<late_creation>& late, std::size_t total)
    {
        if (late.empty())
        {
            return;
        }
        json cause = f.cause.value();
        cause["created_between_launches"] = true;
        json places = json::array();
        for (const auto& l : late)
        {
            json at = {{"module", l.module}, {"file", nullable_text(l.file)}, {"line", l.line ? json(*l.line) : json()}};
            if (!l.stack.empty())
            {
                at["stack"] = l.stack;
            }
            places.push_back(std::move(at));
        }
        cause["late"] = std::move(places);
        f.cause = json_text(cause);
        // a module counts once: several of its kernels, or several processes, declare it late
        std::set<std::string> late_modules;
        for (const auto& l : late)
        {
            late_modules.insert(l.module);
        }
        f.evidence += "; " + std::to_string(late_modules.size()) + " of the " + std::to_string(total)
                      + " were created after the first of them loaded (between launches): merged as they are, one "
                        "module would rebuild at each new kernel (CS-1), so the estimate holds only once they are "
                        "created before the first launch";
        // Not a merge as the code stands: the change that pays first is the reorder.
        f.recommendation = "These kernels were created between launches, so a merge alone would rebuild the shared module "
                           "at each new kernel (CS-1): here the fix is two changes, a reorder first (create the kernels "
                           "before the first launch) and then one shared named module instead of module=\"unique\". "
                           "warp-probe fix writes them as one patch where the records locate both, and says why where they "
                           "do not. (" + std::string(f.recommendation) + ")";
    }

    namespace
    {
        // The hash moves one churn mechanism is attributed, grouped per (module, device): each
        // group's finding, its changes and what each sample's moves cost. A group's finding
        // waits in `out` (reserved by diagnose), in the order the groups were first seen: held
        // in the group, every finding was held twice while the groups lived.
        class churn_groups
        {
        public:
            churn_groups(const context& ctx, const std::string& mechanism, const std::vector<std::string>& triggers,
                         sink& out)
                : m_ctx(ctx), m_mechanism(mechanism), m_triggers(triggers), m_out(out)
            {
                m_groups.reserve(ctx.moves.front().size());  // at most a group per move of the first sample
            }

            void read_samples()
            {
                for (std::size_t gi = 0; gi < m_ctx.good.size(); ++gi)
                {
                    // The groups this sample's moves cost something, summed in the group (nodes do
                    // not move): a table of costs per sample was a second lookup and node per move.
                    std::vector<group*> costed;
                    for (const auto& m : m_ctx.moves[gi])
                    {
                        if (m.mechanism == m_mechanism)
                        {
                            read_move(m, gi, costed);
                        }
                    }
                    for (group* g : costed)
                    {
                        g->per_sample.push_back(g->sample_cost);
                        g->sample_cost = 0.0;
                        g->costed = false;
                    }
                }
            }

            void make_findings(const std::function<std::string(const finding&)>& recommend)
            {
                for (const auto& key : m_order)
                {
                    const auto node = m_groups.find(key);
                    finish(node->second, recommend);
                    m_groups.erase(node);  // as each finding is made: its group's changes are in the finding now
                }
            }

        private:
            struct group
            {
                std::size_t finding = 0;  // its index in out.findings
                // Its changes as compact JSON text, comma-separated, until the finding is made (a
                // group holds one per hash move, and every group lives until the last sample is
                // read), with their words.
                std::string changes;
                std::vector<std::string> what;
                std::vector<double> per_sample;  // one entry per sample that showed it
                double sample_cost = 0.0;        // of the sample being read
                bool costed = false;             // this sample's moves cost it something
                // per block_dim, its first move in the first sample, whose sequence the cause
                // lists (the short hashes are made with the finding: held here, they were a
                // vector of strings per group while every group waited)
                std::map<int, const hash_move*> first_move_by_bd;
                std::set<std::int64_t> pids;  // the processes whose moves the first sample showed
            };
            using module_device = std::tuple<std::string_view, std::string_view>;  // views of the moves' strings

            void read_move(const hash_move& m, std::size_t gi, std::vector<group*>& costed)
            {
                const module_device key(m.module(), m.device());
                auto it = m_groups.find(key);
                if (it == m_groups.end())
                {
                    if (gi != 0)
                    {
                        return;  // a module the first sample did not show churning: no finding to add to
                    }
                    m_order.push_back(key);
                    it = m_groups.emplace(key, group{m_out.findings.size(), {}, {}, {}, 0.0, false, {}, {}}).first;
                    m_out.findings.push_back(make_finding(m_mechanism, m.module(), m.device()));
                }
                auto& g = it->second;
                // the build this change forced, minus what the fix still pays once
                if (!g.costed)
                {
                    g.costed = true;
                    costed.push_back(&g);
                }
                g.sample_cost += m.returning ? m.after->cost_ms(m_ctx.estimates_on()) : removable(*m.before, m_ctx.estimates_on());
                if (gi != 0)
                {
                    return;
                }
                g.pids.insert(m.pid);
                auto& first_move = g.first_move_by_bd[m.block_dim];
                if (!first_move)
                {
                    first_move = &m;
                }
                const std::string change = change_text(m, m_out.findings[g.finding]);
                if (!m.returning)
                {
                    for (auto& w : change_words(*m.change.kind, m.change.detail.value()))
                    {
                        if (std::find(g.what.begin(), g.what.end(), w) == g.what.end())
                        {
                            g.what.push_back(std::move(w));
                        }
                    }
                }
                g.changes += (g.changes.empty() ? "" : ",") + change;
            }

            // The change as compact JSON text, members in the order dump() writes them (sorted),
            // put together from its parts: a tree per move, dumped, was most of this detector's
            // time. The dirtying event that caused it gives the finding its locations.
            std::string change_text(const hash_move& m, finding& f) const
            {
                std::string change = "{\"block_dim\":" + std::to_string(m.block_dim);
                if (!m.returning)
                {
                    change += ",\"detail\":" + m.change.detail.text();
                }
                change += ",\"from\":";
                append_json_string(change, m.before->short_hash());
                if (!m.returning)
                {
                    change += ",\"kind\":";
                    append_json_string(change, word_of(*m.change.kind));
                }
                std::string trigger;
                const process_record* proc = process_of(m_ctx.first_cold(), m.pid);
                if (const dirty_event* d = dirty_between(proc, m.module(), m.before->seq, m.after->seq, m_triggers))
                {
                    trigger = ",\"trigger\":";
                    append_json_string(trigger, d->trigger);
                    trigger += ",\"trigger_detail\":" + d->detail.dump(-1, ' ', false, json::error_handler_t::replace);
                    if (d->file && d->line)
                    {
                        change += ",\"location\":{\"file\":";
                        append_json_string(change, *d->file);
                        change += ",\"line\":" + std::to_string(*d->line) + "}";
                    }
                    locate(*d, f);
                }
                change += ",\"to\":";
                append_json_string(change, m.after->short_hash());
                return change + trigger + "}";
            }

            static void locate(const dirty_event& d, finding& f)
            {
                if (d.file && d.line)
                {
                    std::string what = d.trigger;
                    if (auto k = d.detail.find("kernel"); k != d.detail.end() && k->is_string())
                    {
                        what += " " + k->get<std::string>();
                    }
                    add_location(f, d.file, d.line, what);
                }
                // A kernel made by a factory: the statement that called the factory too.
                if (auto cf = d.detail.find("called_from"); cf != d.detail.end() && cf->is_object())
                {
                    auto file = cf->find("file");
                    auto line = cf->find("line");
                    if (file != cf->end() && file->is_string() && line != cf->end() && line->is_number_integer())
                    {
                        add_location(f, file->get<std::string>(), line->get<int>(), "the factory called here");
                    }
                }
            }

            // The cause's text is spliced from its parts, its changes already text: parsing them
            // back into a tree to dump it again was half of this detector's time, and a tree per
            // part most of the rest. Members in the order dump() writes them (sorted); block_dim
            // and sequence are kept for readers of the first schema (the first block_dim's
            // sequence). {"<block_dim>": [short hashes]}: an object's members are written sorted
            // by their names, which sort as text ("-1" < "128" < "64").
            void finish(group& g, const std::function<std::string(const finding&)>& recommend)
            {
                auto& f = m_out.findings[g.finding];
                std::vector<std::string> sequences;
                std::string block_dims;
                std::vector<std::pair<std::string, std::string>> seq_members;
                const auto hashes_text = [](const std::vector<std::string>& seq)
                { return json_string_array(std::vector<std::string_view>(seq.begin(), seq.end())); };
                std::string first_sequence;  // the first block_dim's, for readers of the first schema
                for (const auto& [bd, move] : g.first_move_by_bd)
                {
                    const std::vector<std::string> seq = m_ctx.first_sequence(*move);
                    if (first_sequence.empty())
                    {
                        first_sequence = hashes_text(seq);
                    }
                    sequences.push_back("at block_dim " + std::to_string(bd) + ": " + join_first(seq, " -> ", 12));
                    block_dims += (block_dims.empty() ? "" : ",") + std::to_string(bd);
                    seq_members.emplace_back(std::to_string(bd), hashes_text(seq));
                }
                std::sort(seq_members.begin(), seq_members.end());
                std::string seq_object;
                for (const auto& [name, hashes] : seq_members)
                {
                    seq_object += (seq_object.empty() ? "{\"" : ",\"") + name + "\":" + hashes;
                }
                seq_object += seq_object.empty() ? "{}" : "}";
                f.cause = json_text::of_compact_text("{\"block_dim\":" + std::to_string(g.first_move_by_bd.begin()->first)
                                                     + ",\"block_dims\":[" + block_dims + "],\"changes\":[" + g.changes
                                                     + "],\"sequence\":" + first_sequence + ",\"sequences\":" + seq_object
                                                     + "}");
                f.savings_ms = median(g.per_sample);
                if (m_mechanism == mechanism_of_returning())  // went back to an earlier hash
                {
                    f.evidence = "module " + f.module + " on " + f.device + " went back to an earlier hash ("
                                 + join_first(sequences, "; ", 12) + "); the returning loads cost ";
                }
                else
                {
                    f.evidence = "module " + f.module + " on " + f.device + " changed hash after it loaded ("
                                 + join_first(sequences, "; ", 12) + "): " + join_first(g.what, "; ", 12) + "; the builds it forced cost ";
                }
                // the clock the figure is on, and when the moves came from several processes (a
                // suite's workers), that it is their builds summed: they ran side by side, so the
                // wall waited less than the sum
                f.evidence += format_ms(f.savings_ms.value_or(0.0)) + " of " + clock_name(m_ctx.estimates_on()) + " (median of "
                              + std::to_string(g.per_sample.size()) + " sample(s)"
                              + (g.pids.size() > 1 ? "; summed over " + std::to_string(g.pids.size())
                                                         + " processes, which built side by side: the wall waited less"
                                                   : std::string())
                              + ")";
                f.evidence.shrink_to_fit();  // grown by appending: a third of it was spare room, kept with the report
                f.recommendation = recommend(f);
            }

            const context& m_ctx;
            const std::string& m_mechanism;
            const std::vector<std::string>& m_triggers;
            sink& m_out;
            std::unordered_map<module_device, group, tuple_hash> m_groups;
            std::vector<module_device> m_order;
        };
    }

    void churn_findings(const context& ctx,
                        const std::string& mechanism,
                        const std::vector<std::string>& triggers,
                        const std::function<std::string(const finding&)>& recommend,
                        sink& out)
    {
        churn_groups groups(ctx, mechanism, triggers, out);
        groups.read_samples();
        groups.make_findings(recommend);
    }
}
