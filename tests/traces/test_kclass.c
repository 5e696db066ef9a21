/* test_kclass.c — kernel unit/precision from names and op FLOPs/bytes from shapes, on names taken
 * from the validation traces and on shapes whose answers are worked out by hand below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "traces/kclass.h"
#include "traces/trace.h"

#include <string.h>

static void test_kclass_tensor_core_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_"
        "tensorop_s1688gemm_64x64_16x6_nn_align4::Params)",
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_"
        "warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        "volta_h884gemm_128x128_ldg8_nn",
        "volta_fp16_s884cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1",
        "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
        "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_stages_64x5_tn",
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_"
        "nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4::Params)",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (trc_kernel_unit(names[i]) != SIM_UNIT_TENSOR)
            fail_msg("expected tensor cores for %s", names[i]);
    }
    assert_string_equal(trc_kernel_precision(names[0]), "tf32");
    assert_string_equal(trc_kernel_precision(names[2]), "fp16");
    assert_string_equal(trc_kernel_precision(names[3]), "fp16");
    assert_string_equal(trc_kernel_precision(names[5]), "bf16");
}

static void test_kclass_cuda_core_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "volta_sgemm_128x64_nt",
        "ampere_sgemm_128x128_tn",
        "volta_scudnn_128x64_relu_interior_nn_v1",
        "cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1",
        "void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, "
        "true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, "
        "unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
        "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float "
        "const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, "
        "unsigned long long, int, float, int, int, int)",
        "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, "
        "float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, "
        "float, int, int, int, int)",
        "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_"
        "128x32_8x5_nn_align1::Params)",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (trc_kernel_unit(names[i]) != SIM_UNIT_CUDA)
            fail_msg("expected CUDA cores for %s", names[i]);
        assert_string_equal(trc_kernel_precision(names[i]), "fp32");
    }
}

static void test_kclass_memory_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<"
        "char*, 3>)",
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, "
        "float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, "
        "float*, float*, float*, float*, float, float)",
        "cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)",
        "cask_cudnn::computeWgradBOffsetsKernel(cask_cudnn::ComputeWgradBOffsetsParams)",
        "void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float "
        "const*, float const*, float*, float const*, float const*, float const*)",
        "void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4, false, false, "
        "cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
        "cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<...>, float, float)",
        "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
        "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_"
        "nonfused::WinogradDataParams<float, float>)",
        "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
        "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
        "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        "Memset (Device)",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (trc_kernel_unit(names[i]) != SIM_UNIT_MEMORY)
            fail_msg("expected memory-bound for %s", names[i]);
    }
    assert_null(trc_kernel_precision(names[0]));
    assert_true(trc_kernel_is_nccl(names[9]));
    assert_false(trc_kernel_is_nccl(names[0]));
    /* template arguments that happen to contain 884 are not an MMA shape */
    assert_int_equal(trc_kernel_unit("void foo_kernel<float, 884, 3>(int)"), SIM_UNIT_MEMORY);
}

static void test_kclass_collective_names(void **state)
{
    (void)state;
    assert_int_equal(trc_coll_kind_from_name("nccl:all_reduce"), TRC_COLL_ALL_REDUCE);
    assert_int_equal(trc_coll_kind_from_name("allreduce"), TRC_COLL_ALL_REDUCE);
    assert_int_equal(trc_coll_kind_from_name("AllReduce_RING_LL_Sum_float"), TRC_COLL_ALL_REDUCE);
    assert_int_equal(trc_coll_kind_from_name("nccl:all_to_all"), TRC_COLL_ALL_TO_ALL);
    assert_int_equal(trc_coll_kind_from_name("nccl:broadcast"), TRC_COLL_BROADCAST);
    assert_int_equal(trc_coll_kind_from_name("nccl:_all_gather_base"), TRC_COLL_ALL_GATHER);
    assert_int_equal(trc_coll_kind_from_name("nccl:_reduce_scatter_base"), TRC_COLL_REDUCE_SCATTER);
    assert_int_equal(trc_coll_kind_from_name("SendRecv_RING_SIMPLE_Sum_int8_t"),
                     TRC_COLL_SEND_RECV);
    assert_int_equal(trc_coll_kind_from_name("nccl:something_new"), TRC_COLL_OTHER);
}

static trc_tensor T(int ndim, int64_t a, int64_t b, int64_t c, int64_t d, int elem)
{
    trc_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = ndim;
    int64_t v[4] = {a, b, c, d};
    t.numel = 1;
    for (int i = 0; i < ndim; i++) {
        t.dim[i] = v[i];
        t.numel *= v[i];
    }
    t.elem_bytes = elem;
    return t;
}

static trc_tensor NONE(void)
{
    trc_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = -1;
    return t;
}

static void test_kclass_conv_flops(void **state)
{
    (void)state;
    /* ResNet-50 conv1, batch 32: input [32,3,224,224], weight [64,3,7,7], output 112x112.
     * 2*N*K*C*R*S*P*Q = 2*32*64*3*7*7*112*112 = 7,552,892,928 (3.78 GMAC, the published
     * 118 MMAC per image times 32). */
    trc_tensor in[3] = {T(4, 32, 3, 224, 224, 4), T(4, 64, 3, 7, 7, 4), NONE()};
    trc_cost c = trc_op_cost("aten::conv2d", in, 3);
    assert_int_equal(c.kind, TRC_COST_CONV_OUT);
    assert_int_equal(c.n, 32);
    assert_int_equal(c.k, 64);
    c = trc_conv_finish(c, 112, 112);
    assert_int_equal(c.kind, TRC_COST_COMPUTE);
    assert_true(c.flops == 7552892928.0);
    /* bytes: input 19,267,584 + weight 37,632 + output 32*64*112*112*4 = 102,760,448 */
    assert_true(c.bytes == 19267584.0 + 37632.0 + 102760448.0);
    /* the old backward op: (input, grad_output, weight); twice the forward FLOPs */
    trc_tensor bw[3] = {T(4, 32, 512, 7, 7, 4), T(4, 32, 2048, 7, 7, 4), T(4, 2048, 512, 1, 1, 4)};
    c = trc_op_cost("aten::cudnn_convolution_backward", bw, 3);
    assert_int_equal(c.kind, TRC_COST_COMPUTE);
    assert_true(c.flops == 2.0 * 2 * 32 * 2048 * 512 * 49.0);
    /* the new one: (grad_output, input, weight) gives the same */
    trc_tensor bw2[3] = {bw[1], bw[0], bw[2]};
    trc_cost c2 = trc_op_cost("aten::convolution_backward", bw2, 3);
    assert_true(c2.flops == c.flops);
    /* grouped (depthwise) conv: weight [K, C/g, R, S] = [32, 1, 3, 3] */
    trc_tensor dw[2] = {T(4, 8, 32, 56, 56, 2), T(4, 32, 1, 3, 3, 2)};
    c = trc_conv_finish(trc_op_cost("aten::conv2d", dw, 2), 56, 56);
    assert_true(c.flops == 2.0 * 8 * 32 * 1 * 9 * 56 * 56);
}

static void test_kclass_matmul_flops(void **state)
{
    (void)state;
    trc_tensor mm[2] = {T(2, 32, 1000, 0, 0, 4), T(2, 1000, 2048, 0, 0, 4)};
    trc_cost c = trc_op_cost("aten::mm", mm, 2);
    assert_int_equal(c.kind, TRC_COST_COMPUTE);
    assert_true(c.flops == 2.0 * 32 * 1000 * 2048);
    trc_tensor addmm[5] = {T(1, 1000, 0, 0, 0, 4), T(2, 32, 2048, 0, 0, 4),
                           T(2, 2048, 1000, 0, 0, 4), NONE(), NONE()};
    c = trc_op_cost("aten::addmm", addmm, 5);
    assert_true(c.flops == 2.0 * 32 * 2048 * 1000 + 32 * 1000);
    /* linear on [4, 128, 768] x W[3072, 768]: rows = 4*128 */
    trc_tensor lin[3] = {T(3, 4, 128, 768, 0, 2), T(2, 3072, 768, 0, 0, 2), T(1, 3072, 0, 0, 0, 2)};
    c = trc_op_cost("aten::linear", lin, 3);
    assert_true(c.flops == 2.0 * 512 * 768 * 3072 + 512 * 3072);
    assert_true(c.bytes == (4.0 * 128 * 768 + 3072.0 * 768 + 3072 + 512.0 * 3072) * 2);
    trc_tensor bmm[2] = {T(3, 12, 128, 64, 0, 2), T(3, 12, 64, 128, 0, 2)};
    c = trc_op_cost("aten::bmm", bmm, 2);
    assert_true(c.flops == 2.0 * 12 * 128 * 64 * 128);
    trc_tensor baddbmm[3] = {T(3, 12, 128, 128, 0, 2), bmm[0], bmm[1]};
    c = trc_op_cost("aten::baddbmm", baddbmm, 3);
    assert_true(c.flops == 2.0 * 12 * 128 * 64 * 128);
}

static void test_kclass_memory_cost(void **state)
{
    (void)state;
    /* relu_ in place on [32,64,112,112] fp32: read 102.76 MB, write as much */
    trc_tensor x[1] = {T(4, 32, 64, 112, 112, 4)};
    trc_cost c = trc_op_cost("aten::relu_", x, 1);
    assert_int_equal(c.kind, TRC_COST_MEMORY);
    assert_true(c.flops == 0);
    assert_true(c.bytes == 2 * 102760448.0);
    /* no tensor inputs: nothing known */
    trc_tensor n[2] = {NONE(), NONE()};
    assert_int_equal(trc_op_cost("aten::empty", n, 2).kind, TRC_COST_NONE);
    /* a conv without a recorded weight falls back to the memory estimate */
    trc_tensor half[1] = {T(4, 2, 3, 8, 8, 4)};
    assert_int_equal(trc_op_cost("aten::conv2d", half, 1).kind, TRC_COST_MEMORY);
}

static void test_kclass_dtypes(void **state)
{
    (void)state;
    assert_int_equal(trc_dtype_bytes("float"), 4);
    assert_int_equal(trc_dtype_bytes("c10::Half"), 2);
    assert_int_equal(trc_dtype_bytes("c10::BFloat16"), 2);
    assert_int_equal(trc_dtype_bytes("long int"), 8);
    assert_int_equal(trc_dtype_bytes("unsigned char"), 1);
    assert_int_equal(trc_dtype_bytes("Int"), 0);
    assert_int_equal(trc_dtype_bytes("GenericList"), 0);
    assert_int_equal(trc_dtype_bytes(""), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kclass_tensor_core_names),
        cmocka_unit_test(test_kclass_cuda_core_names),
        cmocka_unit_test(test_kclass_memory_names),
        cmocka_unit_test(test_kclass_collective_names),
        cmocka_unit_test(test_kclass_conv_flops),
        cmocka_unit_test(test_kclass_matmul_flops),
        cmocka_unit_test(test_kclass_memory_cost),
        cmocka_unit_test(test_kclass_dtypes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
