#pragma once
// Private part of photon_dose_cuda.cu (included there only, inside its anonymous namespace):
// the events and traffic counters of one run, and the kernel profiles the result reports
// from them once the stream has been synchronised.

/// Per kernel kind: launch events and the bytes it moved (the profiles' bandwidth).
struct RunTimers {
  pc::KernelStats stTerma, stBricks, stTransport, stGather, stReduce;
  LaunchTimes tTerma, tBricks, tTransport, tGather, tReduce, tFill, tUpload, tDownload;
  double fillBytes = 0;      ///< atomic-free slot storage zero-filled, all launches
  Event tStart, tStop;       ///< first GPU work .. end of the dose download
  std::string uploadHow;     ///< how the density went up (cold runs)
};

/// The result's kernel, copy and device-span profiles (the stream is synchronised). `dda` and
/// `deposit` name the variant; n voxels; ctOnGpu: the upload was the int16 CT; outputLocked:
/// the dose went by DMA into page-locked memory.
void appendRunProfiles(PhotonDoseResult& result, const RunTimers& T, const std::string& dda,
                       const std::string& deposit, std::size_t n, bool ctOnGpu, bool outputLocked) {
  result.device = penumbra::cuda::currentDeviceName();
  const std::string& device = result.device;
  if (T.tTerma.launches())
    result.profiles.push_back(
        launchProfile("terma_dda", dda, T.stTerma, T.tTerma.totalMs(), T.tTerma.launches(), device));
  if (T.tBricks.launches())
    result.profiles.push_back(launchProfile("terma_bricks", "8^3, any > 0", T.stBricks,
                                            T.tBricks.totalMs(), T.tBricks.launches(), device));
  if (T.tTransport.launches())
    result.profiles.push_back(launchProfile("cccs_transport", dda + " " + deposit, T.stTransport,
                                            T.tTransport.totalMs(), T.tTransport.launches(), device));
  if (T.tGather.launches())
    result.profiles.push_back(launchProfile("cccs_slot_gather", "fixed-order", T.stGather,
                                            T.tGather.totalMs(), T.tGather.launches(), device));
  if (T.tUpload.launches()) {
    pc::KernelStats copy;
    copy.bytes = double(n) * (ctOnGpu ? 2.0 : 4.0);
    result.profiles.push_back(
        launchProfile("density_upload", T.uploadHow, copy, T.tUpload.totalMs(), 1, device));
  }
  {
    pc::KernelStats copy;
    copy.bytes = 4.0 * double(n);
    result.profiles.push_back(launchProfile(
        "dose_download",
        outputLocked ? "DMA into the result (page-locked)" : "pageable memcpy into the result",
        copy, T.tDownload.totalMs(), 1, device));
  }
  if (T.tFill.launches()) {
    pc::KernelStats fill;
    fill.bytes = T.fillBytes;
    result.profiles.push_back(launchProfile("slot_zero_fill", "cudaMemsetAsync", fill,
                                            T.tFill.totalMs(), T.tFill.launches(), device));
  }
  if (T.tReduce.launches())
    result.profiles.push_back(launchProfile("partial_sums", "fixed-order", T.stReduce,
                                            T.tReduce.totalMs(), T.tReduce.launches(), device));
  {
    float ms = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&ms, T.tStart.e, T.tStop.e));
    pc::KernelStats none;
    KernelProfile p =
        launchProfile("cccs_device_total", dda + " " + deposit, none, double(ms), 1, device);
    p.bytes = (T.tUpload.launches() ? double(n) * (ctOnGpu ? 2.0 : 4.0) : 0.0) + 4.0 * double(n);
    result.profiles.push_back(p);
  }
}
