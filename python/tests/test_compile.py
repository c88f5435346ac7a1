"""hir.compile: from text and from a path, the signature a rank sees, and
errors that carry MLIR's diagnostics."""

import pytest

import hir

BINARY = """
fusion.mesh @dev = [0]
func.func @add(%a: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
               %b: tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>> {
  %c = fusion.add %a, %b : tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>,
                           tensor<4x8xf32, #fusion.dist<@dev, [serial, serial]>>
                        -> tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
  return %c : tensor<4x8xf32, #fusion.dist<@dev, [stream, serial]>>
}
"""


def test_from_text_gives_the_local_signature():
    program = hir.compile(BINARY)
    assert program.name == "@add"
    assert program.parameters == [
        ("input #0", (4, 8), "f32"),
        ("input #1", (4, 8), "f32"),
        ("output #0", (4, 8), "f32"),
    ]


def test_from_a_path_gives_local_shards(examples):
    program = hir.compile(examples / "ag_matmul.mlir", num_streams=2)
    assert program.parameters == [
        ("input #0", (4, 1, 256, 1024), "bf16"),
        ("input #1", (1024, 2048), "bf16"),
        ("output #0", (4, 4, 256, 2048), "bf16"),
    ]
    assert hir.compile(str(examples / "allgather.mlir"), p2p="nccl").num_outputs == 1


def test_a_verifier_error_carries_its_location_and_message():
    broken = BINARY.replace("[stream, serial]>> {", "[stream, serial, serial]>> {", 1)
    with pytest.raises(hir.CompileError) as error:
        hir.compile(broken)
    message = str(error.value)
    assert "<string>" in message and "does not parse or verify" in message
    assert "error:" in message


def test_bad_options_are_value_errors():
    with pytest.raises(ValueError, match="p2p"):
        hir.compile(BINARY, p2p="mpi")
    with pytest.raises(ValueError, match="ring-chunks"):
        hir.compile(BINARY, ring_chunks=-1)
    # Past what the IR holds: an error, never wrapped.
    with pytest.raises(ValueError, match="'ring-chunks' must be an integer from 0 to 9223372036854775807, not '9223372036854775808'"):
        hir.compile(BINARY, ring_chunks=2**63)
    with pytest.raises(ValueError, match="no option 'rings'"):
        hir.compile(BINARY, rings=2)
    with pytest.raises(ValueError, match="needs p2p=none"):
        hir.compile(BINARY, p2p="nccl", allgather="broadcast")


def test_every_hir_lower_option_is_a_keyword():
    program = hir.compile(
        BINARY,
        num_streams=2,
        p2p="cuda",
        ring_chunks=1,
        allreduce="ring",
        ring_sync="comm",
        fuse="none",
        overlap="none",
    )
    assert program.num_streams == 2
    assert program.options == (
        "num-streams=2 p2p=cuda ring-chunks=1 allgather=whole reduce-scatter=whole "
        "allreduce=ring ring-sync=comm fuse=none overlap=none"
    )


def test_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        hir.compile(tmp_path / "absent.mlir")


def test_the_package_says_its_version():
    assert isinstance(hir.__version__, str)
    assert hir.__version__.count(".") == 2
