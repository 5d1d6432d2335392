// identities: module identities the run built (module, hash, device, block_dim).
#include "metric.hpp"

namespace xwarp::budget_parts
{
    namespace
    {
        metric_reading measure(const metric_input& in)
        {
            metric_reading out;
            out.value = static_cast<double>(in.r.result.identities.size());
            if (in.most_identities)
            {
                out.module = where(*in.most_identities);
                out.detail = out.module + " has " + std::to_string(in.most_identities->identities) + " of them";
            }
            return out;
        }
    }

    extern const budget_metric identities_metric{"identities", &measure};
}
