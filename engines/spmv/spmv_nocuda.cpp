// Builds without CUDA: the device matrix exists as a type, and every use says why it cannot run.
#include "core/error.hpp"
#include "spmv/cuda_spmv.hpp"
#include "spmv/device_half_csr.hpp"

namespace penumbra::spmv {

struct CudaSpmvMatrix::Impl {
  Delta16Config config;
};

namespace {
[[noreturn]] void noCuda() { PENUMBRA_THROW(Unsupported, "SpMV: this build has no CUDA backend"); }
}  // namespace

CudaSpmvMatrix::CudaSpmvMatrix(const HalfCsr&, bool, Delta16Config, int) { noCuda(); }
CudaSpmvMatrix::CudaSpmvMatrix(const HalfCsr&, const SpmvLayouts&, Delta16Config, StepCsrOptions, int,
                               SlicedOffset8Options) {
  noCuda();
}
CudaSpmvMatrix::CudaSpmvMatrix(DeviceHalfCsr&&, bool, Delta16Config) { noCuda(); }
CudaSpmvMatrix::~CudaSpmvMatrix() = default;
std::int64_t CudaSpmvMatrix::rows() const { noCuda(); }
std::int64_t CudaSpmvMatrix::cols() const { noCuda(); }
std::int64_t CudaSpmvMatrix::nnz() const { noCuda(); }
std::size_t CudaSpmvMatrix::deviceBytes() const { noCuda(); }
std::int64_t CudaSpmvMatrix::wideSlices() const { noCuda(); }
std::int64_t CudaSpmvMatrix::longRows() const { noCuda(); }
const Delta16Config& CudaSpmvMatrix::config() const { noCuda(); }
void CudaSpmvMatrix::reconfigure(const Delta16Config&) { noCuda(); }
const SpmvLayouts& CudaSpmvMatrix::layouts() const { noCuda(); }
int CudaSpmvMatrix::stepBits() const { noCuda(); }
std::int64_t CudaSpmvMatrix::stepTaskGroups() const { noCuda(); }
int CudaSpmvMatrix::offset8ChunksPerTask() const { noCuda(); }
std::int64_t CudaSpmvMatrix::offset8SegmentedSlices() const { noCuda(); }
double CudaSpmvMatrix::realBytes(SpmvKernel) const { noCuda(); }
void CudaSpmvMatrix::apply(const double*, double*, SpmvKernel, void*) const { noCuda(); }
void CudaSpmvMatrix::applyHost(const double*, double*, SpmvKernel) const { noCuda(); }
KernelProfile CudaSpmvMatrix::describe(SpmvKernel) const { noCuda(); }
const std::int64_t* CudaSpmvMatrix::deviceRowPtr() const { noCuda(); }
const std::int32_t* CudaSpmvMatrix::deviceColIdx() const { noCuda(); }
const std::uint16_t* CudaSpmvMatrix::deviceValues() const { noCuda(); }

struct DeviceHalfCsrData {};
DeviceHalfCsr::DeviceHalfCsr() = default;
DeviceHalfCsr::~DeviceHalfCsr() = default;
DeviceHalfCsr::DeviceHalfCsr(DeviceHalfCsr&&) noexcept = default;
DeviceHalfCsr& DeviceHalfCsr::operator=(DeviceHalfCsr&&) noexcept = default;
DeviceHalfCsr DeviceHalfCsr::upload(const HalfCsr&) { noCuda(); }
HalfCsr DeviceHalfCsr::download() const { noCuda(); }
std::size_t DeviceHalfCsr::deviceBytes() const { return 0; }
DeviceHalfCsr transposeOnDevice(const DeviceHalfCsr&) { noCuda(); }

}  // namespace penumbra::spmv
