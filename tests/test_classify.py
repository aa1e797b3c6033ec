"""The op_family/dtype classifier on every kernel name of the seeds and real GPU kernel names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tileprof.core.classify import DTYPES, OP_FAMILIES, classify, dtype_from_torch_types

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# Seed 004's group names (the tile device), each with what it is.
SEED_004 = {
    "exchange": ("exchange", None),
    "attention_softmax_d72_p768_tail_f8_sm4": ("attention", "f8"),
    "fill_zero_u64": ("fill", None),
    "gemm_f16_init_large_rows_interleaved_k80_c112_r121_r122": ("gemm", "f16"),
    "gemm_f16_init_small_rows_interleaved_k80_c112_r121_r122": ("gemm", "f16"),
    "gemm_f16_init_large_rows_interleaved_k80_c96_r121_r122": ("gemm", "f16"),
    "gemm_f16_init_small_rows_interleaved_k80_c96_r121_r122": ("gemm", "f16"),
    "gemm_f8_init_small_rows_interleaved_k128_c80_r104_r105": ("gemm", "f8"),
    "gemm_f8_init_large_rows_interleaved_k128_c80_r104_r105": ("gemm", "f8"),
    "rearrange_row_major_to_amp_f16_o2_r64_p64_c32_p32_b64x16": ("layout", "f16"),
    "copy_u64": ("copy", None),
    "cast_f16_f8": ("cast", "f16"),
    "rearrange_row_major_to_amp_f16_o2_r0_p64_c32_p32_b64x16": ("layout", "f16"),
    "copy_strided_u64": ("copy", None),
    "attention_merge_v72_p80_k768_out16_p8_f16": ("attention", "f16"),
    "reduce_sum_f16": ("reduce", "f16"),
    "rearrange_row_major_to_amp_f16_o2_r0_p64_c16_p16_b64x16": ("layout", "f16"),
    "rearrange_row_major_to_amp_f16_o2_r64_p64_c16_p16_b64x16": ("layout", "f16"),
    "static_copy_u32": ("copy", None),
}

# Seed 003's stage names and semantics (implementation, kernel) and seed 000's implementations.
SEED_NAMES = {
    "gemm strict_fp32": ("gemm", "f32"),
    "gemm fp16_tensor_core": ("gemm", "f16"),
    "gemm int8_tensor_core": ("gemm", "int8"),
    "gemm b1_and_popcount_tensor_core": ("gemm", "b1"),
    "FP32 x FP32 -> FP32; TF32 disabled; cuBLAS": ("gemm", "f32"),
    "FP16 x FP16 -> FP16; cuBLAS Tensor Core path": ("gemm", "f16"),
    "signed INT8 x signed INT8 -> INT32; torch._int_mm Tensor Core path": ("gemm", "int8"),
    "packed B1 AND + population count -> INT32; native SM80 WMMA BMMA": ("gemm", "b1"),
    "int8 inference": ("inference", "int8"),
    "train step (forward+loss+backward+SGD)": ("train_step", None),
}

# Real kernel names from PyTorch, cuBLAS, CUTLASS, cuDNN and flash-attention builds.
REAL = {
    "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_32x3_nn": ("gemm", "f16"),
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
    "execute_segment_k_off_kernel__5x_cublas": ("gemm", "bf16"),
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)": (
        "elementwise",
        "f32",
    ),
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)": (
        "softmax",
        "f32",
    ),
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>"
    "(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)": ("gemm", "tf32"),
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, "
    "true, false, false, true, true, false, false>(Flash_fwd_params)": ("attention", "bf16"),
    "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64,"
    " 128, 128, 8, 2, 4, 2, false, false, cutlass::half_t, Flash_kernel_traits<64, 128, 128, 8, "
    "cutlass::half_t> >, true, false, false, false, false, false>(Flash_bwd_params)": (
        "attention",
        "f16",
    ),
    "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::"
    "half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)": ("attention", "f16"),
    "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128_cluster1x2x1_execute_"
    "kernel__5x_cublas": ("gemm", "f8"),
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
    "MeanOps<float, float, float, float>, unsigned int, float, 4, 4> >": ("reduce", "f32"),
    "void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda"
    "(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >": ("cast", "bf16"),
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "std::array<char*, 1ul> >": ("fill", "f32"),
    "Memcpy DtoH (Device -> Pinned)": ("copy", None),
    "Memset (Device)": ("fill", None),
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
    "BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor"
    "<float> > >": ("elementwise", "f16"),
    "void cutlass::Kernel2<cutlass_80_tensorop_i16832gemm_s8_128x256_64x3_tn_align16>": (
        "gemm",
        "int8",
    ),
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)": (
        "exchange",
        "f32",
    ),
    "nvjet_sm90_hsh_48x64_64x15_4x2_h_bz_bias_TNN": ("gemm", "f16"),
    # "nocast" is not a cast: gpu_kernel_impl_nocast is ATen's plain elementwise path.
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
    "BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >"
    "(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::"
    "binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::"
    "gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::"
    "binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor"
    "<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::"
    "{lambda(int)#1})": ("elementwise", "f32"),
    # A convolution is matrix work (cuDNN's reduced_divisor is an index helper, not a reduce).
    "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, float, "
    "float, float, float, float, true, float, float>(cudnnTensorStruct, float const*, "
    "cudnnFilterStruct, float const*, cudnnConvolutionStruct, cudnnTensorStruct, float*, float, "
    "float, cudnn::reduced_divisor, cudnn::reduced_divisor, cudnn::reduced_divisor, "
    "cudnn::reduced_divisor, cudnn::reduced_divisor, int, float const*, float const*, "
    "cudnnActivationStruct)": ("gemm", "f32"),
    "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize64x64x64_"
    "stage5_warpsize2x2x1_g1_tensor16x8x16_kernel_cudnn": ("gemm", "f16"),
    "void cudnn::detail::dgrad_engine<float, 128, 6, 8, 3, 3, 5, false>(int, int, int, "
    "float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, "
    "unsigned long long, int, float, int, int, int)": ("gemm", "f32"),
    "volta_h884gemm_128x64_ldg8_nn": ("gemm", "f16"),
    "volta_sgemm_128x64_nn": ("gemm", "f32"),
    "ampere_sgemm_128x64_tn": ("gemm", "f32"),
    "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x64x32_stage3_warpsize2x2x1_tensor16x8x16_"
    "kernel": ("gemm", "f16"),
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
    "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::"
    "{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, "
    "TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
    "at::native::memory::StoreWithCast<1> >": ("copy", "f32"),
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
    "func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::"
    "TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp"
    "<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::"
    "operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)": (
        "reduce",
        "f32",
    ),
    "Memcpy HtoD (Pageable -> Device)": ("copy", None),
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
    "cast_kernel<c10::Half, float>(at::TensorIteratorBase&)::{lambda(float)#1}, "
    "std::array<char*, 2ul> >": ("cast", "f16"),
    "nvjet_sm90_tst_64x128_64x8_2x1_v_bz_NTN": ("gemm", "bf16"),
    "void at::native::batch_transpose_kernel<float>(float*, float const*, int, int, int)": (
        "layout",
        "f32",
    ),
    "void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 4, true, "
    "false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)": (
        "softmax",
        "f16",
    ),
    "triton_poi_fused_add_relu_0": ("elementwise", None),
    # cuBLASLt's split-K epilogue adds partial products: a reduce, though cublas names it
    "void cublasLt::splitKreduce_kernel<32, 16, int, __nv_bfloat16, __nv_bfloat16, float, "
    "__nv_bfloat16, false, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, true, true, false, "
    "false>": ("reduce", "bf16"),
    # The kernel's own name says what it is, whichever op launched it (issue: cuDNN's layout
    # transforms were GEMMs because aten::cudnn_convolution launched them). From the TraceLens
    # H100 traces and the HTA traces in fixtures/:
    "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, "
    "false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t"
    "<__nv_bfloat16>, __nv_bfloat16 const*, __nv_bfloat16*)": ("layout", "bf16"),
    "void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, "
    "(cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, float const*, float*)": (
        "layout",
        "f32",
    ),
    # CUTLASS's split-K epilogue and cuDNN's weight-gradient helper add partial sums
    "void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK<"
    "cutlass_cudnn_train::MatrixShape<4, 128>, float> >": ("reduce", "f32"),
    "void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, "
    "int)": ("reduce", "f32"),
    # cuDNN's implicit-GEMM convolution with a fused relu is a GEMM, not an elementwise kernel
    "cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1": ("gemm", None),
    "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args"
    "<float>)": ("reduce", "f32"),
    # ROCm (the MI300X TraceLens traces): Tensile/hipBLASLt GEMMs and Triton attention
    "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1": ("gemm", None),
    "attn_fwd": ("attention", None),
    "some_custom_thing": ("other", None),
}


@pytest.mark.parametrize(
    ("name", "expected"), [*SEED_004.items(), *SEED_NAMES.items(), *REAL.items()]
)
def test_classify(name: str, expected: tuple[str, str | None]) -> None:
    assert classify(name) == expected


def test_seed_004_names_are_all_covered() -> None:
    seed = json.loads((FIXTURES / "seed_004_summary.json").read_text())
    assert {g["name"] for g in seed["groups"]} == set(SEED_004)


def test_every_kernel_of_the_h200_trace_is_classified() -> None:
    lines = (FIXTURES / "traces" / "h200_train_steps.kernels.txt").read_text().splitlines()
    names = [line.split("\t", 1)[1] for line in lines]
    results = [classify(n) for n in names]
    assert all(f in OP_FAMILIES and f != "other" for f, _ in results)
    assert all(d is None or d in DTYPES for _, d in results)


def test_first_name_that_matches_wins() -> None:
    assert classify(None, "", "gemm_f16_x") == ("gemm", "f16")
    assert classify("train step", "selected WMMA") == ("train_step", None)


def test_torch_input_types() -> None:
    assert dtype_from_torch_types(["c10::BFloat16", "c10::BFloat16"]) == "bf16"
    assert dtype_from_torch_types(["Scalar", "float"]) == "f32"
    assert dtype_from_torch_types(["long int"]) is None
    assert dtype_from_torch_types(None) is None
