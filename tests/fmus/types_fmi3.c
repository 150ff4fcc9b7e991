/* Test fixture: an FMI 3.0 co-simulation FMU with a signal of every numeric type (tests/fmus/build.py build_types).
 *
 * For each type T of Float32, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Boolean (index i = 0 .. 9):
 * input in_T (value reference 10 + i) and output out_T (30 + i) = in_T + 1 (Boolean: not in_T), computed by
 * fmi3DoStep; output total (Float64, 50) = the sum of the inputs as doubles plus 1000 x the length of the String
 * parameter label (60). */
#include <stdint.h>

#include "fmi3_common.h"

typedef struct inst {
    fmi3_base base;
    float f32[2];
    int8_t i8[2];
    uint8_t u8[2];
    int16_t i16[2];
    uint16_t u16[2];
    int32_t i32[2];
    uint32_t u32[2];
    int64_t i64[2];
    uint64_t u64[2];
    fmi3Boolean b[2];
    double total;
    char label[64];
} inst;

static fmi3Instance create(const fmi3_instantiation *a) { return fmi3_new_instance(sizeof(inst), a, NULL); }
FMI3_INSTANTIATE_CO_SIMULATION(create)
void fmi3FreeInstance(fmi3Instance c) { free(c); }
fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean a, fmi3Float64 b, fmi3Float64 t0, fmi3Boolean d,
                                       fmi3Float64 e) { return fmi3OK; }
FMI3_NOTHING_TO_DO(fmi3ExitInitializationMode)
FMI3_NOTHING_TO_DO(fmi3EnterStepMode)
FMI3_NOTHING_TO_DO(fmi3Terminate)
FMI3_NOTHING_TO_DO(fmi3Reset)

/* in (k = 0) or out (k = 1) of type index i for value reference vr; -1 if none */
static int slot(fmi3ValueReference vr, int type, int *k) {
    if (vr == 10 + (unsigned)type) { *k = 0; return 0; }
    if (vr == 30 + (unsigned)type) { *k = 1; return 0; }
    return -1;
}

#define ACCESS(T, idx, field)                                                                                       \
    fmi3Status fmi3Get##T(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, fmi3##T v[], size_t nv) {       \
        inst *c = cc;                                                                                               \
        for (size_t q = 0; q < n; q++) {                                                                            \
            int k;                                                                                                  \
            if (slot(vr[q], idx, &k)) return fmi3Error;                                                            \
            v[q] = c->field[k];                                                                                     \
        }                                                                                                           \
        return fmi3OK;                                                                                              \
    }                                                                                                               \
    fmi3Status fmi3Set##T(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, const fmi3##T v[], size_t nv) { \
        inst *c = cc;                                                                                               \
        for (size_t q = 0; q < n; q++) {                                                                            \
            int k;                                                                                                  \
            if (slot(vr[q], idx, &k) || k != 0) return fmi3Error;                                                  \
            c->field[0] = v[q];                                                                                     \
        }                                                                                                           \
        return fmi3OK;                                                                                              \
    }
ACCESS(Float32, 0, f32)
ACCESS(Int8, 1, i8)
ACCESS(UInt8, 2, u8)
ACCESS(Int16, 3, i16)
ACCESS(UInt16, 4, u16)
ACCESS(Int32, 5, i32)
ACCESS(UInt32, 6, u32)
ACCESS(Int64, 7, i64)
ACCESS(UInt64, 8, u64)
ACCESS(Boolean, 9, b)

fmi3Status fmi3GetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, fmi3Float64 v[], size_t nv) {
    for (size_t q = 0; q < n; q++) {
        if (vr[q] != 50) return fmi3Error;
        v[q] = ((inst *)cc)->total;
    }
    return fmi3OK;
}
fmi3Status fmi3SetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, const fmi3Float64 v[], size_t nv) {
    return n ? fmi3Error : fmi3OK;
}
fmi3Status fmi3SetString(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, const fmi3String v[], size_t nv) {
    inst *c = cc;
    for (size_t q = 0; q < n; q++) {
        if (vr[q] != 60 || !v[q]) return fmi3Error;
        strncpy(c->label, v[q], sizeof c->label - 1);
    }
    return fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance cc, fmi3Float64 T, fmi3Float64 H, fmi3Boolean no_set_prior, fmi3Boolean *event,
                      fmi3Boolean *terminate, fmi3Boolean *early, fmi3Float64 *last) {
    inst *c = cc;
    fmi3_step_flags_clear(event, terminate, early);
    *last = T + H;
    c->f32[1] = c->f32[0] + 1;
    c->i8[1] = (int8_t)(c->i8[0] + 1);
    c->u8[1] = (uint8_t)(c->u8[0] + 1);
    c->i16[1] = (int16_t)(c->i16[0] + 1);
    c->u16[1] = (uint16_t)(c->u16[0] + 1);
    c->i32[1] = c->i32[0] + 1;
    c->u32[1] = c->u32[0] + 1;
    c->i64[1] = c->i64[0] + 1;
    c->u64[1] = c->u64[0] + 1;
    c->b[1] = !c->b[0];
    c->total = (double)c->f32[0] + c->i8[0] + c->u8[0] + c->i16[0] + c->u16[0] + c->i32[0] + c->u32[0] +
               (double)c->i64[0] + (double)c->u64[0] + c->b[0] + 1000.0 * (double)strlen(c->label);
    return fmi3OK;
}
