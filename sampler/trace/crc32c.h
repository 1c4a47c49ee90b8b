// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78): the
// checksum of .hpt trace blocks (trace_format.h).
//
// Why CRC-32C and not XXH64: both are fast enough, but CRC-32C comes with
// guarantees a hash does not give: every burst error up to 32 bits and every
// error of 1-3 flipped bits in a message shorter than 2^31 bits is detected
// (Hamming distance 4; Koopman, "32-bit CRCs for embedded networks", 2002),
// which is exactly what sampler/trace/trace_test.cc checks bit by bit. It is
// the checksum of ext4/btrfs metadata, iSCSI and the LevelDB/RocksDB block
// trailers. Debian's libxxhash-dev would be a new dependency (it is not on
// these machines; zstd keeps its copy private), and CRC-32C is 60 lines.
//
// Speed: on x86-64 with SSE 4.2 (every x86-64 CPU since 2008/2011) the
// crc32 instruction does ~8 bytes per cycle-ish; elsewhere a slice-by-8 table
// does ~1-2 GB/s. Either is far faster than zstd decompression, so the
// checksum never limits trace reading (trace_benchmark.cc measures it).
// Selected once at startup; thread-safe; no allocation.

#ifndef HOTPAGE_SAMPLER_TRACE_CRC32C_H_
#define HOTPAGE_SAMPLER_TRACE_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace hotpage {

// Extends a running CRC-32C (start from 0) over `size` bytes at `data`:
// Crc32c(Crc32c(0, a, n), b, m) == Crc32c(0, a followed by b, n + m).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

inline uint32_t Crc32c(const void* data, size_t size) {
  return Crc32cExtend(0, data, size);
}

namespace internal {
// The portable table implementation, exposed so tests can compare it with
// the hardware one on the same inputs.
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t size);
// True when Crc32cExtend uses the SSE 4.2 instruction.
bool Crc32cIsHardware();
}  // namespace internal

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_TRACE_CRC32C_H_
