// PTXBench knowledge pack, Blackwell: operand tables for ptxb/blackwell/tcgen05.cuh (not for
// direct use). tcgen05.ld/st .32x32b.xN move N 32-bit registers per thread and inline PTX needs
// one operand per register: these macros spell "%0, ..., %(N-1)" and the constraints.
#pragma once

#define PTXB_TMEM_REGS_1 "%0"
#define PTXB_TMEM_REGS_2 PTXB_TMEM_REGS_1 ", %1"
#define PTXB_TMEM_REGS_4 PTXB_TMEM_REGS_2 ", %2, %3"
#define PTXB_TMEM_REGS_8 PTXB_TMEM_REGS_4 ", %4, %5, %6, %7"
#define PTXB_TMEM_REGS_16 PTXB_TMEM_REGS_8 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define PTXB_TMEM_REGS_32 PTXB_TMEM_REGS_16 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define PTXB_TMEM_REGS_64 PTXB_TMEM_REGS_32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define PTXB_TMEM_REGS_128 PTXB_TMEM_REGS_64 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

#define PTXB_TMEM_OUT_1(r) "=r"(r[0])
#define PTXB_TMEM_OUT_2(r) PTXB_TMEM_OUT_1(r), "=r"(r[1])
#define PTXB_TMEM_OUT_4(r) PTXB_TMEM_OUT_2(r), "=r"(r[2]), "=r"(r[3])
#define PTXB_TMEM_OUT_8(r) PTXB_TMEM_OUT_4(r), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
#define PTXB_TMEM_OUT_16(r) PTXB_TMEM_OUT_8(r), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
#define PTXB_TMEM_OUT_32(r) PTXB_TMEM_OUT_16(r), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
#define PTXB_TMEM_OUT_64(r) PTXB_TMEM_OUT_32(r), "=r"(r[32]), "=r"(r[33]), "=r"(r[34]), "=r"(r[35]), "=r"(r[36]), "=r"(r[37]), "=r"(r[38]), "=r"(r[39]), "=r"(r[40]), "=r"(r[41]), "=r"(r[42]), "=r"(r[43]), "=r"(r[44]), "=r"(r[45]), "=r"(r[46]), "=r"(r[47]), "=r"(r[48]), "=r"(r[49]), "=r"(r[50]), "=r"(r[51]), "=r"(r[52]), "=r"(r[53]), "=r"(r[54]), "=r"(r[55]), "=r"(r[56]), "=r"(r[57]), "=r"(r[58]), "=r"(r[59]), "=r"(r[60]), "=r"(r[61]), "=r"(r[62]), "=r"(r[63])
#define PTXB_TMEM_OUT_128(r) PTXB_TMEM_OUT_64(r), "=r"(r[64]), "=r"(r[65]), "=r"(r[66]), "=r"(r[67]), "=r"(r[68]), "=r"(r[69]), "=r"(r[70]), "=r"(r[71]), "=r"(r[72]), "=r"(r[73]), "=r"(r[74]), "=r"(r[75]), "=r"(r[76]), "=r"(r[77]), "=r"(r[78]), "=r"(r[79]), "=r"(r[80]), "=r"(r[81]), "=r"(r[82]), "=r"(r[83]), "=r"(r[84]), "=r"(r[85]), "=r"(r[86]), "=r"(r[87]), "=r"(r[88]), "=r"(r[89]), "=r"(r[90]), "=r"(r[91]), "=r"(r[92]), "=r"(r[93]), "=r"(r[94]), "=r"(r[95]), "=r"(r[96]), "=r"(r[97]), "=r"(r[98]), "=r"(r[99]), "=r"(r[100]), "=r"(r[101]), "=r"(r[102]), "=r"(r[103]), "=r"(r[104]), "=r"(r[105]), "=r"(r[106]), "=r"(r[107]), "=r"(r[108]), "=r"(r[109]), "=r"(r[110]), "=r"(r[111]), "=r"(r[112]), "=r"(r[113]), "=r"(r[114]), "=r"(r[115]), "=r"(r[116]), "=r"(r[117]), "=r"(r[118]), "=r"(r[119]), "=r"(r[120]), "=r"(r[121]), "=r"(r[122]), "=r"(r[123]), "=r"(r[124]), "=r"(r[125]), "=r"(r[126]), "=r"(r[127])

#define PTXB_TMEM_IN_1(r) "r"(r[0])
#define PTXB_TMEM_IN_2(r) PTXB_TMEM_IN_1(r), "r"(r[1])
#define PTXB_TMEM_IN_4(r) PTXB_TMEM_IN_2(r), "r"(r[2]), "r"(r[3])
#define PTXB_TMEM_IN_8(r) PTXB_TMEM_IN_4(r), "r"(r[4]), "r"(r[5]), "r"(r[6]), "r"(r[7])
#define PTXB_TMEM_IN_16(r) PTXB_TMEM_IN_8(r), "r"(r[8]), "r"(r[9]), "r"(r[10]), "r"(r[11]), "r"(r[12]), "r"(r[13]), "r"(r[14]), "r"(r[15])
#define PTXB_TMEM_IN_32(r) PTXB_TMEM_IN_16(r), "r"(r[16]), "r"(r[17]), "r"(r[18]), "r"(r[19]), "r"(r[20]), "r"(r[21]), "r"(r[22]), "r"(r[23]), "r"(r[24]), "r"(r[25]), "r"(r[26]), "r"(r[27]), "r"(r[28]), "r"(r[29]), "r"(r[30]), "r"(r[31])
#define PTXB_TMEM_IN_64(r) PTXB_TMEM_IN_32(r), "r"(r[32]), "r"(r[33]), "r"(r[34]), "r"(r[35]), "r"(r[36]), "r"(r[37]), "r"(r[38]), "r"(r[39]), "r"(r[40]), "r"(r[41]), "r"(r[42]), "r"(r[43]), "r"(r[44]), "r"(r[45]), "r"(r[46]), "r"(r[47]), "r"(r[48]), "r"(r[49]), "r"(r[50]), "r"(r[51]), "r"(r[52]), "r"(r[53]), "r"(r[54]), "r"(r[55]), "r"(r[56]), "r"(r[57]), "r"(r[58]), "r"(r[59]), "r"(r[60]), "r"(r[61]), "r"(r[62]), "r"(r[63])
#define PTXB_TMEM_IN_128(r) PTXB_TMEM_IN_64(r), "r"(r[64]), "r"(r[65]), "r"(r[66]), "r"(r[67]), "r"(r[68]), "r"(r[69]), "r"(r[70]), "r"(r[71]), "r"(r[72]), "r"(r[73]), "r"(r[74]), "r"(r[75]), "r"(r[76]), "r"(r[77]), "r"(r[78]), "r"(r[79]), "r"(r[80]), "r"(r[81]), "r"(r[82]), "r"(r[83]), "r"(r[84]), "r"(r[85]), "r"(r[86]), "r"(r[87]), "r"(r[88]), "r"(r[89]), "r"(r[90]), "r"(r[91]), "r"(r[92]), "r"(r[93]), "r"(r[94]), "r"(r[95]), "r"(r[96]), "r"(r[97]), "r"(r[98]), "r"(r[99]), "r"(r[100]), "r"(r[101]), "r"(r[102]), "r"(r[103]), "r"(r[104]), "r"(r[105]), "r"(r[106]), "r"(r[107]), "r"(r[108]), "r"(r[109]), "r"(r[110]), "r"(r[111]), "r"(r[112]), "r"(r[113]), "r"(r[114]), "r"(r[115]), "r"(r[116]), "r"(r[117]), "r"(r[118]), "r"(r[119]), "r"(r[120]), "r"(r[121]), "r"(r[122]), "r"(r[123]), "r"(r[124]), "r"(r[125]), "r"(r[126]), "r"(r[127])

// PTXB_TMEM_FOR_EACH_NUM(X): X(num, operand number that follows num registers).
#define PTXB_TMEM_FOR_EACH_NUM(X) X(1, 1) X(2, 2) X(4, 4) X(8, 8) X(16, 16) X(32, 32) X(64, 64) X(128, 128)
