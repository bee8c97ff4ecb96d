// PTXBench knowledge pack, Hopper: operand tables for ptxb/hopper/wgmma.cuh (not for direct use).
//
// Inline PTX needs one explicit operand per accumulator register: m64nNk16 with f32 accumulators
// takes N/2 registers (PTX ISA "Matrix Fragments for wgmma.mma_async.m64nNk16", accumulator D).
// These macros spell the register list "%0, ..., %(R-1)" and the matching "+f" constraints for
// R = 4, 8, ..., 128, each built from the previous one; PTXB_WGMMA_SPECIALIZE then instantiates
// one wgmma shape per N with the operand numbers that follow the accumulators.
#pragma once

#define PTXB_WGMMA_ACC_4 "%0, %1, %2, %3"
#define PTXB_WGMMA_ACC_8 PTXB_WGMMA_ACC_4 ", %4, %5, %6, %7"
#define PTXB_WGMMA_ACC_12 PTXB_WGMMA_ACC_8 ", %8, %9, %10, %11"
#define PTXB_WGMMA_ACC_16 PTXB_WGMMA_ACC_12 ", %12, %13, %14, %15"
#define PTXB_WGMMA_ACC_20 PTXB_WGMMA_ACC_16 ", %16, %17, %18, %19"
#define PTXB_WGMMA_ACC_24 PTXB_WGMMA_ACC_20 ", %20, %21, %22, %23"
#define PTXB_WGMMA_ACC_28 PTXB_WGMMA_ACC_24 ", %24, %25, %26, %27"
#define PTXB_WGMMA_ACC_32 PTXB_WGMMA_ACC_28 ", %28, %29, %30, %31"
#define PTXB_WGMMA_ACC_36 PTXB_WGMMA_ACC_32 ", %32, %33, %34, %35"
#define PTXB_WGMMA_ACC_40 PTXB_WGMMA_ACC_36 ", %36, %37, %38, %39"
#define PTXB_WGMMA_ACC_44 PTXB_WGMMA_ACC_40 ", %40, %41, %42, %43"
#define PTXB_WGMMA_ACC_48 PTXB_WGMMA_ACC_44 ", %44, %45, %46, %47"
#define PTXB_WGMMA_ACC_52 PTXB_WGMMA_ACC_48 ", %48, %49, %50, %51"
#define PTXB_WGMMA_ACC_56 PTXB_WGMMA_ACC_52 ", %52, %53, %54, %55"
#define PTXB_WGMMA_ACC_60 PTXB_WGMMA_ACC_56 ", %56, %57, %58, %59"
#define PTXB_WGMMA_ACC_64 PTXB_WGMMA_ACC_60 ", %60, %61, %62, %63"
#define PTXB_WGMMA_ACC_68 PTXB_WGMMA_ACC_64 ", %64, %65, %66, %67"
#define PTXB_WGMMA_ACC_72 PTXB_WGMMA_ACC_68 ", %68, %69, %70, %71"
#define PTXB_WGMMA_ACC_76 PTXB_WGMMA_ACC_72 ", %72, %73, %74, %75"
#define PTXB_WGMMA_ACC_80 PTXB_WGMMA_ACC_76 ", %76, %77, %78, %79"
#define PTXB_WGMMA_ACC_84 PTXB_WGMMA_ACC_80 ", %80, %81, %82, %83"
#define PTXB_WGMMA_ACC_88 PTXB_WGMMA_ACC_84 ", %84, %85, %86, %87"
#define PTXB_WGMMA_ACC_92 PTXB_WGMMA_ACC_88 ", %88, %89, %90, %91"
#define PTXB_WGMMA_ACC_96 PTXB_WGMMA_ACC_92 ", %92, %93, %94, %95"
#define PTXB_WGMMA_ACC_100 PTXB_WGMMA_ACC_96 ", %96, %97, %98, %99"
#define PTXB_WGMMA_ACC_104 PTXB_WGMMA_ACC_100 ", %100, %101, %102, %103"
#define PTXB_WGMMA_ACC_108 PTXB_WGMMA_ACC_104 ", %104, %105, %106, %107"
#define PTXB_WGMMA_ACC_112 PTXB_WGMMA_ACC_108 ", %108, %109, %110, %111"
#define PTXB_WGMMA_ACC_116 PTXB_WGMMA_ACC_112 ", %112, %113, %114, %115"
#define PTXB_WGMMA_ACC_120 PTXB_WGMMA_ACC_116 ", %116, %117, %118, %119"
#define PTXB_WGMMA_ACC_124 PTXB_WGMMA_ACC_120 ", %120, %121, %122, %123"
#define PTXB_WGMMA_ACC_128 PTXB_WGMMA_ACC_124 ", %124, %125, %126, %127"

#define PTXB_WGMMA_OUT_4(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define PTXB_WGMMA_OUT_8(d) PTXB_WGMMA_OUT_4(d), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define PTXB_WGMMA_OUT_12(d) PTXB_WGMMA_OUT_8(d), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
#define PTXB_WGMMA_OUT_16(d) PTXB_WGMMA_OUT_12(d), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define PTXB_WGMMA_OUT_20(d) PTXB_WGMMA_OUT_16(d), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
#define PTXB_WGMMA_OUT_24(d) PTXB_WGMMA_OUT_20(d), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define PTXB_WGMMA_OUT_28(d) PTXB_WGMMA_OUT_24(d), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
#define PTXB_WGMMA_OUT_32(d) PTXB_WGMMA_OUT_28(d), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define PTXB_WGMMA_OUT_36(d) PTXB_WGMMA_OUT_32(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
#define PTXB_WGMMA_OUT_40(d) PTXB_WGMMA_OUT_36(d), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define PTXB_WGMMA_OUT_44(d) PTXB_WGMMA_OUT_40(d), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
#define PTXB_WGMMA_OUT_48(d) PTXB_WGMMA_OUT_44(d), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define PTXB_WGMMA_OUT_52(d) PTXB_WGMMA_OUT_48(d), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
#define PTXB_WGMMA_OUT_56(d) PTXB_WGMMA_OUT_52(d), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define PTXB_WGMMA_OUT_60(d) PTXB_WGMMA_OUT_56(d), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
#define PTXB_WGMMA_OUT_64(d) PTXB_WGMMA_OUT_60(d), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define PTXB_WGMMA_OUT_68(d) PTXB_WGMMA_OUT_64(d), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
#define PTXB_WGMMA_OUT_72(d) PTXB_WGMMA_OUT_68(d), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define PTXB_WGMMA_OUT_76(d) PTXB_WGMMA_OUT_72(d), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
#define PTXB_WGMMA_OUT_80(d) PTXB_WGMMA_OUT_76(d), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define PTXB_WGMMA_OUT_84(d) PTXB_WGMMA_OUT_80(d), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
#define PTXB_WGMMA_OUT_88(d) PTXB_WGMMA_OUT_84(d), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define PTXB_WGMMA_OUT_92(d) PTXB_WGMMA_OUT_88(d), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91])
#define PTXB_WGMMA_OUT_96(d) PTXB_WGMMA_OUT_92(d), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define PTXB_WGMMA_OUT_100(d) PTXB_WGMMA_OUT_96(d), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99])
#define PTXB_WGMMA_OUT_104(d) PTXB_WGMMA_OUT_100(d), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define PTXB_WGMMA_OUT_108(d) PTXB_WGMMA_OUT_104(d), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107])
#define PTXB_WGMMA_OUT_112(d) PTXB_WGMMA_OUT_108(d), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define PTXB_WGMMA_OUT_116(d) PTXB_WGMMA_OUT_112(d), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115])
#define PTXB_WGMMA_OUT_120(d) PTXB_WGMMA_OUT_116(d), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define PTXB_WGMMA_OUT_124(d) PTXB_WGMMA_OUT_120(d), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123])
#define PTXB_WGMMA_OUT_128(d) PTXB_WGMMA_OUT_124(d), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// PTXB_WGMMA_FOR_EACH_N(X): X(N, R, R+0, ..., R+8) for N = 8, 16, ..., 256 (R = N/2).
#define PTXB_WGMMA_FOR_EACH_N(X) \
  X(8, 4, 4, 5, 6, 7, 8, 9, 10, 11, 12) \
  X(16, 8, 8, 9, 10, 11, 12, 13, 14, 15, 16) \
  X(24, 12, 12, 13, 14, 15, 16, 17, 18, 19, 20) \
  X(32, 16, 16, 17, 18, 19, 20, 21, 22, 23, 24) \
  X(40, 20, 20, 21, 22, 23, 24, 25, 26, 27, 28) \
  X(48, 24, 24, 25, 26, 27, 28, 29, 30, 31, 32) \
  X(56, 28, 28, 29, 30, 31, 32, 33, 34, 35, 36) \
  X(64, 32, 32, 33, 34, 35, 36, 37, 38, 39, 40) \
  X(72, 36, 36, 37, 38, 39, 40, 41, 42, 43, 44) \
  X(80, 40, 40, 41, 42, 43, 44, 45, 46, 47, 48) \
  X(88, 44, 44, 45, 46, 47, 48, 49, 50, 51, 52) \
  X(96, 48, 48, 49, 50, 51, 52, 53, 54, 55, 56) \
  X(104, 52, 52, 53, 54, 55, 56, 57, 58, 59, 60) \
  X(112, 56, 56, 57, 58, 59, 60, 61, 62, 63, 64) \
  X(120, 60, 60, 61, 62, 63, 64, 65, 66, 67, 68) \
  X(128, 64, 64, 65, 66, 67, 68, 69, 70, 71, 72) \
  X(136, 68, 68, 69, 70, 71, 72, 73, 74, 75, 76) \
  X(144, 72, 72, 73, 74, 75, 76, 77, 78, 79, 80) \
  X(152, 76, 76, 77, 78, 79, 80, 81, 82, 83, 84) \
  X(160, 80, 80, 81, 82, 83, 84, 85, 86, 87, 88) \
  X(168, 84, 84, 85, 86, 87, 88, 89, 90, 91, 92) \
  X(176, 88, 88, 89, 90, 91, 92, 93, 94, 95, 96) \
  X(184, 92, 92, 93, 94, 95, 96, 97, 98, 99, 100) \
  X(192, 96, 96, 97, 98, 99, 100, 101, 102, 103, 104) \
  X(200, 100, 100, 101, 102, 103, 104, 105, 106, 107, 108) \
  X(208, 104, 104, 105, 106, 107, 108, 109, 110, 111, 112) \
  X(216, 108, 108, 109, 110, 111, 112, 113, 114, 115, 116) \
  X(224, 112, 112, 113, 114, 115, 116, 117, 118, 119, 120) \
  X(232, 116, 116, 117, 118, 119, 120, 121, 122, 123, 124) \
  X(240, 120, 120, 121, 122, 123, 124, 125, 126, 127, 128) \
  X(248, 124, 124, 125, 126, 127, 128, 129, 130, 131, 132) \
  X(256, 128, 128, 129, 130, 131, 132, 133, 134, 135, 136)
