// Why a module's hash moved: the classification every churn detector shares, made once per
// diagnosis in the context.
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_set>

#include "detector.hpp"

namespace xwarp
{
    using nlohmann::json;

    namespace
    {
        json diff_options(const json& a, const json& b)
        {
            json out = json::object();
            if (&a == &b || !a.is_object() || !b.is_object())  // equal sets are shared (shared_options)
            {
                return out;
            }
            for (const auto& [k, v] : b.items())
            {
                if (k == "block_dim" || k == "output_arch")
                {
                    continue;
                }
                auto it = a.find(k);
                if (it == a.end() || *it != v)
                {
                    out[k] = {{"old", it == a.end() ? json() : *it}, {"new", v}};
                }
            }
            for (const auto& [k, v] : a.items())
            {
                if (k != "block_dim" && k != "output_arch" && !b.contains(k))
                {
                    out[k] = {{"old", v}, {"new", json()}};
                }
            }
            return out;
        }
    }

    // The causes are told apart in the order a fix would need them: an option difference
    // rebuilds the module whatever its kernels are; a kernel definition that is new to the
    // module (a key it never had, not a generic instance) is CS-1 even when generic instances
    // came with it; then more closures of one key (a factory), new content under a known key
    // (a changed callee when the callees' hashes moved: dependency-change),
    // new generic instances (CS-6, whether or not the generic kernel had an instance before),
    // kernels gone, and last a changed callee.
    namespace
    {
        // Two loads' kernel entries compared: plain kernel definitions new to the module, plain
        // kernels with new content under a known key, new generic instances, keys gone, and each
        // side's plain keys with multiplicity (a factory's closures share a key). Views into
        // the two snapshots, which outlive it: no key is copied, and the sets are sorted vectors
        // (this runs for every hash move, tens of thousands of times in a large report, where
        // node-based sets made two dozen allocations a call).
        struct kernel_diff
        {
            std::vector<std::string> added;
            std::vector<std::string> changed;
            json instances = json::array();  // {kernel, signature}
            std::vector<std::string> removed;
            std::vector<std::string_view> plain_a, plain_b;  // sorted

            std::size_t count_a(std::string_view key) const { return count(plain_a, key); }
            std::size_t count_b(std::string_view key) const { return count(plain_b, key); }

            static std::size_t count(const std::vector<std::string_view>& v, std::string_view x)
            {
                const auto [first, last] = std::equal_range(v.begin(), v.end(), x);
                return static_cast<std::size_t>(last - first);
            }
        };

        kernel_diff diff_kernels(const content_snapshot& a, const content_snapshot& b)
        {
            using entry = std::tuple<std::string_view, std::string_view, std::string_view>;
            kernel_diff d;
            std::vector<std::string_view> keys_a, keys_b;
            std::vector<entry> entries_a;
            keys_a.reserve(a.kernels.size());
            entries_a.reserve(a.kernels.size());
            for (const auto& k : a.kernels)
            {
                keys_a.push_back(k.key);
                entries_a.emplace_back(k.key, k.hash, k.sig);
                if (!k.generic)
                {
                    d.plain_a.push_back(k.key);
                }
            }
            keys_b.reserve(b.kernels.size());
            for (const auto& k : b.kernels)
            {
                keys_b.push_back(k.key);
                if (!k.generic)
                {
                    d.plain_b.push_back(k.key);
                }
            }
            const auto sort_unique = [](std::vector<std::string_view>& v)
            {
                std::sort(v.begin(), v.end());
                v.erase(std::unique(v.begin(), v.end()), v.end());
            };
            sort_unique(keys_a);
            sort_unique(keys_b);
            std::sort(entries_a.begin(), entries_a.end());
            std::sort(d.plain_a.begin(), d.plain_a.end());
            std::sort(d.plain_b.begin(), d.plain_b.end());
            const auto has = [](const std::vector<std::string_view>& v, std::string_view x)
            { return std::binary_search(v.begin(), v.end(), x); };
            std::vector<std::string_view> seen_added;  // sorted
            for (const auto& k : b.kernels)
            {
                if (std::binary_search(entries_a.begin(), entries_a.end(), entry(k.key, k.hash, k.sig)))
                {
                    continue;
                }
                if (k.generic)
                {
                    d.instances.push_back({{"kernel", k.key}, {"signature", k.sig}});
                }
                else if (!has(keys_a, k.key))
                {
                    const auto at = std::lower_bound(seen_added.begin(), seen_added.end(), std::string_view(k.key));
                    if (at == seen_added.end() || *at != k.key)
                    {
                        seen_added.insert(at, k.key);
                        d.added.push_back(k.key);
                    }
                }
                else if (d.count_b(k.key) <= d.count_a(k.key))
                {
                    d.changed.push_back(k.key);
                }
            }
            for (const auto key : keys_a)
            {
                if (!has(keys_b, key))
                {
                    d.removed.emplace_back(key);
                }
            }
            return d;
        }

        // User functions whose recorded hash moved, came or went.
        std::vector<std::string> changed_functions(const content_snapshot& a, const content_snapshot& b)
        {
            std::vector<std::string> funcs;
            for (const auto& [k, h] : b.functions)
            {
                auto it = a.functions.find(k);
                if (it == a.functions.end() || it->second != h)
                {
                    funcs.push_back(k);
                }
            }
            for (const auto& [k, h] : a.functions)
            {
                if (!b.functions.count(k))
                {
                    funcs.push_back(k);
                }
            }
            return funcs;
        }
    }

    hash_change classify_hash_change(const module_load& before, const module_load& after)
    {
        if (!before.snapshot || !after.snapshot)
        {
            return {change_kind::unknown, {{"why", "no content snapshot (figures from Warp's log lines)"}}};
        }
        const auto& a = *before.snapshot;
        const auto& b = *after.snapshot;
        json opts = diff_options(*a.options, *b.options);
        if (!opts.empty())
        {
            return {change_kind::option, {{"options", opts}}};
        }
        kernel_diff d = diff_kernels(a, b);
        if (!d.added.empty())
        {
            json detail = {{"added", std::move(d.added)}, {"removed", d.removed}};
            if (!d.instances.empty())
            {
                detail["generic_instances"] = std::move(d.instances);
            }
            return {change_kind::kernel_set, std::move(detail)};
        }
        for (const auto& key : d.plain_b)
        {
            if (d.count_b(key) > d.count_a(key))
            {
                return {change_kind::kernel_instances_added,
                        {{"kernel", std::string(key)}, {"instances_before", d.count_a(key)}, {"instances_after", d.count_b(key)}}};
            }
        }
        // A callee that changed shows as new content of every kernel calling it (Warp hashes
        // callees deeply): when the recorded callee hashes moved too, the callee is the cause.
        const std::vector<std::string> funcs = changed_functions(a, b);
        if (!d.changed.empty())
        {
            if (!funcs.empty())
            {
                return {change_kind::dependency, {{"functions", funcs}, {"kernels", d.changed}}};
            }
            return {change_kind::kernel_content, {{"kernels", d.changed}}};
        }
        if (!d.instances.empty())
        {
            std::vector<std::string> signatures;
            for (const auto& i : d.instances)
            {
                signatures.push_back(i["signature"].get<std::string>());
            }
            return {change_kind::generic_instance, {{"kernel", d.instances[0]["kernel"]}, {"signatures", signatures}, {"instances", d.instances}}};
        }
        if (!d.removed.empty())
        {
            return {change_kind::kernel_set, {{"added", json::array()}, {"removed", d.removed}}};
        }
        if (!funcs.empty())
        {
            return {change_kind::dependency, {{"functions", funcs}}};
        }
        return {change_kind::unknown, {{"why", "kernels, options and functions recorded identical"}}};
    }

    namespace
    {
        std::string listed(const json& names, std::size_t at_most = 3)
        {
            std::string out;
            std::size_t n = 0;
            for (const auto& v : names)
            {
                if (n++ == at_most)
                {
                    return out + " and " + std::to_string(names.size() - at_most) + " more";
                }
                out += (out.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
            }
            return out;
        }
    }

    std::string describe_hash_change(const hash_change& c)
    {
        const json& d = c.detail;
        if (c.kind == change_kind::option && d.contains("options"))
        {
            std::string out;
            for (const auto& [k, v] : d["options"].items())
            {
                out += (out.empty() ? "option " : ", ") + k + ": " + v.value("old", json()).dump() + " -> "
                       + v.value("new", json()).dump();
            }
            return out;
        }
        if (c.kind == change_kind::kernel_set)
        {
            const json added = d.value("added", json::array());
            const json removed = d.value("removed", json::array());
            std::string out;
            if (!added.empty())
            {
                out = std::string(added.size() == 1 ? "kernel " : "kernels ") + listed(added) + " added";
            }
            if (!removed.empty())
            {
                out += std::string(out.empty() ? "" : "; ") + listed(removed) + " gone";
            }
            return out;
        }
        if (c.kind == change_kind::kernel_instances_added)
        {
            return "another closure of " + d.value("kernel", std::string("a kernel")) + " (a kernel factory)";
        }
        if (c.kind == change_kind::kernel_content)
        {
            return "new content of " + listed(d.value("kernels", json::array()));
        }
        if (c.kind == change_kind::dependency)
        {
            return "callee changed: " + listed(d.value("functions", json::array()));
        }
        if (c.kind == change_kind::generic_instance)
        {
            return "generic instance of " + d.value("kernel", std::string("a kernel")) + " for "
                   + listed(d.value("signatures", json::array()), 2);
        }
        return "";
    }

    namespace detect
    {
        namespace
        {
            // (pid, module, device, block_dim), views of the report's strings -> its sequence
            using sequence_key = std::tuple<std::int64_t, std::string_view, std::string_view, int>;
            using sequence_index = std::unordered_map<sequence_key, std::size_t, tuple_hash>;

            // Loads of one (process, module, device, block_dim), in the order they happened, the
            // sequences in the order they first appear (a hash move keeps its sequence's index).
            load_sequences sequences(const run_result& run)
            {
                sequence_index index;
                index.reserve(run.module_loads.size());
                std::vector<const module_load*> ordered;
                ordered.reserve(run.module_loads.size());
                for (const auto& l : run.module_loads)
                {
                    ordered.push_back(&l);
                }
                // A pass's loads are recorded a process at a time, each in order: then the sort
                // below would move none, and it walked them log n times.
                bool recorded_in_order = true;
                std::vector<std::int64_t> pids;
                for (std::size_t i = 0; i < ordered.size() && recorded_in_order; ++i)
                {
                    if (i == 0 || ordered[i]->pid != ordered[i - 1]->pid)
                    {
                        recorded_in_order = std::find(pids.begin(), pids.end(), ordered[i]->pid) == pids.end();
                        pids.push_back(ordered[i]->pid);
                    }
                    else
                    {
                        recorded_in_order = ordered[i]->seq >= ordered[i - 1]->seq;
                    }
                }
                if (!recorded_in_order)
                {
                    std::stable_sort(ordered.begin(),
                                     ordered.end(),
                                     [](const module_load* a, const module_load* b)
                                     { return a->pid == b->pid ? a->seq < b->seq : false; });
                }
                std::vector<std::size_t> sequence_of(ordered.size());
                std::vector<std::size_t> sizes;
                for (std::size_t i = 0; i < ordered.size(); ++i)
                {
                    const module_load* l = ordered[i];
                    const auto [it, first] = index.try_emplace(
                        sequence_key(l->pid, l->module, l->device, l->block_dim.value_or(-1)), sizes.size());
                    if (first)
                    {
                        sizes.push_back(0);
                    }
                    sequence_of[i] = it->second;
                    ++sizes[it->second];
                }
                load_sequences out;
                out.starts.resize(sizes.size() + 1, 0);
                for (std::size_t q = 0; q < sizes.size(); ++q)
                {
                    out.starts[q + 1] = out.starts[q] + sizes[q];
                }
                out.loads.resize(ordered.size());
                std::vector<std::size_t> next(out.starts.begin(), out.starts.end() - 1);
                for (std::size_t i = 0; i < ordered.size(); ++i)
                {
                    out.loads[next[sequence_of[i]]++] = ordered[i];
                }
                return out;
            }

            // A kernel (re)definition recorded between two loads of one module.
            bool redefined_kernel_between(const run_result& run, const module_load& before, const module_load& after)
            {
                const process_record* p = process_of(run, after.pid);
                if (!p)
                {
                    return false;
                }
                const auto [first, last] = dirty_events_between(*p, before.seq, after.seq);
                return std::any_of(first, last, [&](const dirty_event& d) { return d.module == after.module && d.trigger == "kernel"; });
            }

            std::vector<hash_move> moves_of(const run_result& run, const load_sequences& sequences)
            {
                std::vector<hash_move> out;
                for (std::size_t q = 0; q < sequences.size(); ++q)
                {
                    const module_load* const* seq = sequences.begin(q);
                    const std::size_t length = sequences.length(q);
                    if (length < 2)
                    {
                        continue;  // most modules load once: no move, and nothing to remember
                    }
                    // views of the loads' hashes, hashed: a module that moved at every one of
                    // 20,000 tests made a linear search here quadratic
                    std::unordered_set<std::string_view> seen{seq[0]->hash};
                    for (std::size_t i = 1; i < length; ++i)
                    {
                        const module_load* prev = seq[i - 1];
                        const module_load* l = seq[i];
                        if (prev->hash == l->hash)
                        {
                            continue;
                        }
                        hash_move m;
                        m.pid = l->pid;
                        m.block_dim = l->block_dim.value_or(-1);
                        m.before = prev;
                        m.after = l;
                        m.sequence = q;
                        m.returning = seen.count(l->hash) > 0;
                        if (m.returning)
                        {
                            m.mechanism = mechanism_of_returning();
                        }
                        else
                        {
                            hash_change change = classify_hash_change(*prev, *l);
                            if (change.kind == change_kind::dependency && change.detail.contains("kernels")
                                && redefined_kernel_between(run, *prev, *l))
                            {
                                // Warp hashes a callee in its caller's context, so a kernel redefined
                                // with other captured values moves its callees' hashes too: the
                                // recorded redefinition says which it was.
                                change = {change_kind::kernel_content, {{"kernels", change.detail["kernels"]}}};
                            }
                            m.mechanism = mechanism_of_change(change.kind);
                            m.change = {change.kind, json_text(change.detail)};
                            seen.emplace(l->hash);
                        }
                        out.push_back(std::move(m));
                    }
                }
                out.shrink_to_fit();  // held through every detector: not up to twice its moves
                return out;
            }
        }

        context::context(const report& rep) : r(rep)
        {
            for (const auto& s : r.samples)
            {
                if (s.ok())
                {
                    good.push_back(&s);
                }
            }
            for (std::size_t gi = 0; gi < good.size(); ++gi)
            {
                // the first good cold pass's sequences are kept (first_sequence reads them)
                load_sequences seqs = sequences(good[gi]->cold);
                moves.push_back(moves_of(good[gi]->cold, seqs));
                if (gi == 0)
                {
                    m_first_sequences = std::move(seqs);
                }
                m_granular.push_back(granular(good[gi]->cold, estimates_on()));
            }
        }

        const context::launched_map& context::launched() const
        {
            if (!m_launched)
            {
                m_launched.emplace();
                if (!good.empty())
                {
                    for (const auto& l : first_cold().launches)
                    {
                        (*m_launched)[{std::string_view(l.module), std::string_view(l.device)}][l.block_dim].insert(l.kernel);
                    }
                }
            }
            return *m_launched;
        }

        std::vector<std::string> context::first_sequence(const hash_move& first_pass_move) const
        {
            // Made when asked: held for every sequence, the short hashes were a vector of strings
            // per module through every detector. By the move's sequence: looked up by its
            // strings, each cost a hash of its module's name.
            std::vector<std::string> hashes;
            const std::size_t q = first_pass_move.sequence;
            const module_load* const* seq = m_first_sequences.begin(q);
            for (std::size_t i = 0; i < m_first_sequences.length(q); ++i)
            {
                std::string h = seq[i]->short_hash();
                if (hashes.empty() || hashes.back() != h)
                {
                    hashes.push_back(std::move(h));
                }
            }
            return hashes;
        }

        bool context::unused_preload_variant(const module_load& l) const
        {
            if (!l.via_preload || !l.block_dim || good.empty() || first_cold().launch_total <= 0)
            {
                return false;
            }
            auto it = launched().find({l.module, l.device});
            return it == launched().end() || !it->second.count(*l.block_dim);
        }
    }
}
