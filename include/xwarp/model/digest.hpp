// SHA-256 of bytes: what identifies a report file the probe wrote, byte for byte (the run store
// keeps the digest of every report it wrote, and a report is the user's own only when its bytes
// have one of them). FIPS 180-4; none of the project's libraries offers a hash.
#ifndef XWARP_MODEL_DIGEST_HPP
#define XWARP_MODEL_DIGEST_HPP

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace xwarp
{
    class sha256
    {
    public:
        sha256();
        void add(std::string_view bytes);
        std::string hex();  // the digest as 64 lowercase hex digits; ends the hash

    private:
        void block(const unsigned char* p);
        std::array<std::uint32_t, 8> m_state;
        std::array<unsigned char, 64> m_buffer{};
        std::size_t m_used = 0;
        std::uint64_t m_bits = 0;
    };

    std::string sha256_hex(std::string_view bytes);
}

#endif
