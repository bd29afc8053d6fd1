#pragma once
// Switching between the warp emulator's lane fibers (warp_emulator.hpp). glibc's swapcontext
// saves and restores the signal mask on every switch, a system call: the emulator switches at
// every warp-wide operation, and the GPU tests emulate every case they run, so the calls made up
// much of their time on the GPU machine. On x86-64 a switch is six callee-saved registers, the
// SSE and x87 control words and the stack pointer (the System V ABI's callee-saved state);
// elsewhere, and under AddressSanitizer (which follows stacks switched by swapcontext, not by
// hand), the fibers stay on ucontext.
#include <cstddef>
#include <cstdint>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PENUMBRA_FIBERS_UCONTEXT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || !defined(__x86_64__)
#define PENUMBRA_FIBERS_UCONTEXT 1
#endif

#ifdef PENUMBRA_FIBERS_UCONTEXT
#include <ucontext.h>
#endif

namespace penumbra::spmv::test {

#ifdef PENUMBRA_FIBERS_UCONTEXT

struct FiberContext {
  ucontext_t uc{};
};

/// `to` will start at entry() on [stack, stack + bytes) when first switched to.
inline void fiberPrepare(FiberContext& to, char* stack, std::size_t bytes, void (*entry)()) {
  getcontext(&to.uc);
  to.uc.uc_stack.ss_sp = stack;
  to.uc.uc_stack.ss_size = bytes;
  to.uc.uc_link = nullptr;
  makecontext(&to.uc, entry, 0);
}
/// Saves the running fiber in `from` and resumes `to`.
inline void fiberSwitch(FiberContext& from, FiberContext& to) { swapcontext(&from.uc, &to.uc); }

#else

/// Pushes rbp, rbx, r12-r15 and the control words, stores rsp at *save, then loads rsp = to and
/// pops the same from there ("returning" into the fiber that saved `to`).
[[gnu::naked, gnu::noinline]] inline void fiberSwitchStacks(void** /*save*/, void* /*to*/) {
  asm volatile(
      "pushq %rbp\n\t"
      "pushq %rbx\n\t"
      "pushq %r12\n\t"
      "pushq %r13\n\t"
      "pushq %r14\n\t"
      "pushq %r15\n\t"
      "subq $16, %rsp\n\t"
      "stmxcsr (%rsp)\n\t"
      "fnstcw 8(%rsp)\n\t"
      "movq %rsp, (%rdi)\n\t"
      "movq %rsi, %rsp\n\t"
      "ldmxcsr (%rsp)\n\t"
      "fldcw 8(%rsp)\n\t"
      "addq $16, %rsp\n\t"
      "popq %r15\n\t"
      "popq %r14\n\t"
      "popq %r13\n\t"
      "popq %r12\n\t"
      "popq %rbx\n\t"
      "popq %rbp\n\t"
      "ret\n\t");
}

struct FiberContext {
  void* sp = nullptr;  ///< the saved stack pointer (fiberSwitchStacks' frame)
};

/// `to` will start at entry() on [stack, stack + bytes) when first switched to: a frame as
/// fiberSwitchStacks leaves one, the current control words, zero registers, and entry() as the
/// return address, placed so that entry() starts with rsp = 8 (mod 16), as after a call.
inline void fiberPrepare(FiberContext& to, char* stack, std::size_t bytes, void (*entry)()) {
  auto top = reinterpret_cast<std::uintptr_t>(stack + bytes) & ~std::uintptr_t(15);
  auto* ret = reinterpret_cast<std::uint64_t*>(top - 16);  // 16-aligned: entry's rsp = ret + 8
  ret[0] = reinterpret_cast<std::uint64_t>(entry);
  ret[1] = 0;  // entry() never returns
  std::uint64_t* frame = ret - 8;
  for (int i = 0; i < 8; ++i) frame[i] = 0;
  std::uint32_t mxcsr;
  std::uint16_t fpcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpcw));
  frame[0] = mxcsr;
  frame[1] = fpcw;
  to.sp = frame;
}
/// Saves the running fiber in `from` and resumes `to`.
inline void fiberSwitch(FiberContext& from, FiberContext& to) {
  fiberSwitchStacks(&from.sp, to.sp);
}

#endif

}  // namespace penumbra::spmv::test
