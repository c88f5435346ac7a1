// A C program against HIR::hir_runtime (libhir_runtime.so) alone: it calls
// the runtime's C ABI as a lowered host program does, with no launcher (the
// library starts its default world, one cpu rank), and prints exp(0..3).
#include <stdint.h>
#include <stdio.h>

// A memref<4xf32> descriptor, and the unranked memref that points to it.
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} Ranked1;
typedef struct {
  int64_t rank;
  void *descriptor;
} Unranked;

int64_t hir_rt_rank(void);
int64_t hir_rt_num_devices(void);
void *hir_rt_alloc(int64_t site, int64_t bytes);
void _mlir_ciface_hir_rt_exp_f32(Unranked *input, Unranked *output);
int64_t hir_runtime_synchronize(void);

int main(void) {
  float *x = hir_rt_alloc(0, 4 * sizeof(float));
  float *y = hir_rt_alloc(1, 4 * sizeof(float));
  if (!x || !y)
    return 1;
  for (int i = 0; i < 4; ++i)
    x[i] = (float)i;
  Ranked1 xd = {x, x, 0, {4}, {1}}, yd = {y, y, 0, {4}, {1}};
  Unranked xu = {1, &xd}, yu = {1, &yd};
  _mlir_ciface_hir_rt_exp_f32(&xu, &yu);
  if (hir_runtime_synchronize() != 0)
    return 1;
  printf("rank %lld of %lld: exp(0..3) = %.4f %.4f %.4f %.4f\n", (long long)hir_rt_rank(),
         (long long)hir_rt_num_devices(), y[0], y[1], y[2], y[3]);
  return 0;
}
