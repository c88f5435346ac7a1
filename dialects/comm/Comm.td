//===- Comm.td - the comm dialect: collectives, P2P, coalescing, waits ----===//
//
// Communication between ranks on buffers. Every transfer is posted on the
// current stream and returns a request; `comm.wait` makes the current stream
// wait for it. A team is the list of global ranks that take part, in order.
//
//===----------------------------------------------------------------------===//

#ifndef HIR_COMM_TD
#define HIR_COMM_TD

include "mlir/IR/OpBase.td"
include "common/Traits.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"

def Comm_Dialect : Dialect {
  let name = "comm";
  let cppNamespace = "::hir::comm";
  let summary = "Collectives, point-to-point transfers and their completion";
  let description = [{
    Buffers are memrefs holding each rank's part. Collectives run over a team
    (global ranks, in order) on a backend: `nccl`, or `cuda` (CUDA-IPC copies,
    point-to-point only).
  }];
  let useDefaultTypePrinterParser = 1;
}

def Comm_Resource : Resource<"::hir::comm::CommResource">;
// Communications are posted on the current stream (see common/Resources.h).
def Comm_StreamResource : Resource<"::hir::StreamResource">;

def Comm_RequestType : TypeDef<Comm_Dialect, "Request"> {
  let mnemonic = "request";
  let summary = "a posted communication, completed by comm.wait";
  let description = [{
    ```mlir
    %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
    comm.wait %r
    ```
  }];
}

def Comm_Backend : I32EnumAttr<"Backend", "how data moves between ranks", [
    I32EnumAttrCase<"nccl", 0>,
    I32EnumAttrCase<"cuda", 1>
  ]> {
  let cppNamespace = "::hir::comm";
}

def Comm_ReduceKind : I32EnumAttr<"ReduceKind", "how values are combined", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"prod", 1>,
    I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"avg", 4>
  ]> {
  let cppNamespace = "::hir::comm";
}

// Floats or signless integers (i32, i64); `avg` combines floats only.
def Comm_Buffer : MemRefOf<[F16, BF16, F32, I32, I64]>;

class Comm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Comm_Dialect, mnemonic, !listconcat(traits,
        [HIR_SizesFit,
         MemoryEffects<[MemRead<Comm_Resource>, MemWrite<Comm_Resource>,
                        MemRead<Comm_StreamResource>]>])>;

defvar Comm_DefaultBackend = DefaultValuedAttr<Comm_Backend, "::hir::comm::Backend::nccl">;
defvar Comm_DefaultAxis = DefaultValuedAttr<I64Attr, "0">;

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// A collective from `input` to `output`; `fields` is the part of the syntax
// between the operands and `team` (the reduction kind, the root, the axis).
// Destination-passing style: `output` is the buffer the collective writes.
// `team [0, 1]` is one team; `team [[0, 1], [2, 3]]` is disjoint teams of
// one size (the rows or columns of a 2-D mesh), stored as the flat list and
// `team_size`: each rank runs the collective within the team that holds it.
class Comm_CollectiveOp<string mnemonic, dag extraArgs, string fields>
    : Comm_Op<mnemonic, [DestinationStyleOpInterface]> {
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputMutable(); }
    /// The number of ranks of each team.
    int64_t getTeamSizeOrAll() {
      return getTeamSize() ? static_cast<int64_t>(*getTeamSize())
                           : static_cast<int64_t>(getTeam().size());
    }
  }];
  let arguments = !con((ins Arg<Comm_Buffer, "", [MemRead]>:$input,
                            Arg<Comm_Buffer, "", [MemWrite]>:$output,
                            DenseI64ArrayAttr:$team,
                            OptionalAttr<I64Attr>:$team_size,
                            Comm_DefaultBackend:$backend), extraArgs);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = "$input `into` $output " # fields #
    " `team` custom<Teams>($team, $team_size) (`on` $backend^)? attr-dict `:` type($input) `into` type($output)";
  let hasVerifier = 1;
}

def Comm_AllgatherOp : Comm_CollectiveOp<"allgather",
    (ins Comm_DefaultAxis:$axis), "(`axis` $axis^)?"> {
  let summary = "every rank gets the concatenation of all ranks' inputs";
  let description = [{
    Concatenates along `axis` (default 0) in team order: the output's extent
    there is the team size times the input's. With several teams (a 2-D
    mesh's rows here), each rank gathers within its own.

    ```mlir
    %r = comm.allgather %a into %g team [0, 1, 2, 3]
        : memref<1x256x1024xbf16> into memref<4x256x1024xbf16>
    %s = comm.allgather %a into %h team [[0, 1], [2, 3]]
        : memref<1x256x1024xbf16> into memref<2x256x1024xbf16>
    ```
  }];
}

def Comm_AllreduceOp : Comm_CollectiveOp<"allreduce",
    (ins Comm_ReduceKind:$kind), ""> {
  let summary = "every rank gets the combination of all ranks' inputs";
  let description = [{
    ```mlir
    %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
    ```
  }];
  let assemblyFormat = "$input `into` $output $kind `team` custom<Teams>($team, $team_size) "
    "(`on` $backend^)? attr-dict `:` type($input) `into` type($output)";
}

def Comm_ReduceScatterOp : Comm_CollectiveOp<"reduce_scatter",
    (ins Comm_ReduceKind:$kind, Comm_DefaultAxis:$axis), ""> {
  let summary = "combine all ranks' inputs, each rank keeps its slice";
  let description = [{
    The input's extent along `axis` is the team size times the output's; rank
    `team[j]` keeps slice `j` of the combination.

    ```mlir
    %r = comm.reduce_scatter %a into %b sum team [0, 1]
        : memref<2x8xf32> into memref<1x8xf32>
    ```
  }];
  let assemblyFormat = "$input `into` $output $kind (`axis` $axis^)? `team` "
    "custom<Teams>($team, $team_size) (`on` $backend^)? attr-dict `:` type($input) "
    "`into` type($output)";
}

// The root of a broadcast or reduce: a constant global rank (`root 0`), or
// an `index` value (`root %i`), e.g. a loop's index, which the runtime checks
// is in the team when the op runs.
defvar Comm_Root = (ins OptionalAttr<I64Attr>:$root, Optional<Index>:$dynamic_root);

def Comm_BroadcastOp : Comm_CollectiveOp<"broadcast", Comm_Root,
    "`root` ($dynamic_root^) : ($root)?"> {
  let summary = "every rank gets the root's input";
  let description = [{
    The root is a global rank of the team: a constant, or an `index` value
    such as a loop's index (iteration `i` broadcasts rank `i`'s slice). A
    value root outside the team fails the rank when the op runs.

    ```mlir
    %r = comm.broadcast %a into %b root 0 team [0, 1] : memref<8xf32> into memref<8xf32>
    %s = comm.broadcast %a into %b root %i team [0, 1] : memref<8xf32> into memref<8xf32>
    ```
  }];
}

def Comm_ReduceOp : Comm_CollectiveOp<"reduce",
    !con((ins Comm_ReduceKind:$kind), Comm_Root), ""> {
  let summary = "the root gets the combination of all ranks' inputs";
  let description = [{
    The root is a constant global rank of the team or an `index` value, as
    for `comm.broadcast`; the other ranks' outputs are left as they are.

    ```mlir
    %r = comm.reduce %a into %b sum root 0 team [0, 1] : memref<8xf32> into memref<8xf32>
    %s = comm.reduce %a into %b sum root %i team [0, 1] : memref<8xf32> into memref<8xf32>
    ```
  }];
  let assemblyFormat = "$input `into` $output $kind `root` ($dynamic_root^) : ($root)? "
    "`team` custom<Teams>($team, $team_size) (`on` $backend^)? attr-dict `:` type($input) "
    "`into` type($output)";
}

def Comm_GatherOp : Comm_CollectiveOp<"gather",
    (ins I64Attr:$root, Comm_DefaultAxis:$axis), "`root` $root (`axis` $axis^)?"> {
  let summary = "the root gets the concatenation of all ranks' inputs";
  let description = [{
    As allgather, but only the root's output is written.

    ```mlir
    %r = comm.gather %a into %g root 0 team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
    ```
  }];
}

def Comm_ScatterOp : Comm_CollectiveOp<"scatter",
    (ins I64Attr:$root, Comm_DefaultAxis:$axis), "`root` $root (`axis` $axis^)?"> {
  let summary = "rank team[j] gets slice j of the root's input";
  let description = [{
    ```mlir
    %r = comm.scatter %a into %b root 0 team [0, 1] : memref<2x8xf32> into memref<1x8xf32>
    ```
  }];
}

def Comm_AlltoallOp : Comm_CollectiveOp<"alltoall",
    (ins Comm_DefaultAxis:$axis), "(`axis` $axis^)?"> {
  let summary = "slice j of every rank's input goes to rank team[j]";
  let description = [{
    Input and output have one shape; its extent along `axis` is a multiple of
    the team size. Slice `i` of rank `team[j]`'s output is slice `j` of rank
    `team[i]`'s input.

    ```mlir
    %r = comm.alltoall %a into %b team [0, 1] : memref<4x8xf32> into memref<4x8xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

def Comm_SendOp : Comm_Op<"send"> {
  let summary = "send a buffer to a peer";
  let description = [{
    `peer` is a global rank of the team. Matched, in order, with the peer's
    `recv` from this rank. Inside a coalescing group the group's request
    completes it.

    ```mlir
    %r = comm.send %a to %peer team [0, 1, 2, 3] : memref<256x1024xbf16>
    ```
  }];
  let arguments = (ins Arg<Comm_Buffer, "", [MemRead]>:$buffer, Index:$peer,
                       DenseI64ArrayAttr:$team, Comm_DefaultBackend:$backend);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = [{
    $buffer `to` $peer `team` $team (`on` $backend^)? attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def Comm_RecvOp : Comm_Op<"recv"> {
  let summary = "receive a buffer from a peer";
  let description = [{
    ```mlir
    %r = comm.recv %b from %peer team [0, 1, 2, 3] : memref<256x1024xbf16>
    ```
  }];
  let arguments = (ins Arg<Comm_Buffer, "", [MemWrite]>:$buffer, Index:$peer,
                       DenseI64ArrayAttr:$team, Comm_DefaultBackend:$backend);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = [{
    $buffer `from` $peer `team` $team (`on` $backend^)? attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def Comm_StartCoalescingOp : Comm_Op<"start_coalescing"> {
  let summary = "open a group of sends and receives posted together";
  let description = [{
    Until the matching `end_coalescing` in the same block, `nccl` sends and
    receives are grouped (`ncclGroupStart`/`ncclGroupEnd`): their order
    across ranks cannot deadlock. Groups do not nest.

    ```mlir
    comm.start_coalescing
    %s = comm.send %a to %next team [0, 1] : memref<8xf32>
    %q = comm.recv %b from %prev team [0, 1] : memref<8xf32>
    %r = comm.end_coalescing
    comm.wait %r
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Comm_EndCoalescingOp : Comm_Op<"end_coalescing"> {
  let summary = "close a coalescing group; its request completes the group";
  let description = [{
    ```mlir
    %r = comm.end_coalescing
    ```
  }];
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Comm_WaitOp : Comm_Op<"wait"> {
  let summary = "the current stream waits for a request to complete";
  let description = [{
    A request of a send or receive inside a coalescing group cannot be waited
    for: wait for the group's `end_coalescing`.

    ```mlir
    comm.wait %r
    ```
  }];
  let arguments = (ins Comm_RequestType:$request);
  let assemblyFormat = "$request attr-dict";
  let hasVerifier = 1;
}

def Comm_ShareMemHandlesOp : Comm_Op<"share_mem_handles"> {
  let summary = "exchange CUDA-IPC handles of buffers with the team";
  let description = [{
    Every rank of the team exports these buffers and maps its peers' ones;
    done once per buffer and cached. `cuda` sends and receives need the
    buffers of both sides shared first.

    ```mlir
    comm.share_mem_handles %a, %b team [0, 1] : memref<8xf32>, memref<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Comm_Buffer>:$buffers, DenseI64ArrayAttr:$team);
  let assemblyFormat = "$buffers `team` $team attr-dict `:` type($buffers)";
  let hasVerifier = 1;
}

def Comm_BarrierOp : Comm_Op<"barrier"> {
  let summary = "the host waits until every rank of the team reaches it";
  let description = [{
    ```mlir
    comm.barrier team [0, 1, 2, 3]
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$team, Comm_DefaultBackend:$backend);
  let assemblyFormat = "`team` $team (`on` $backend^)? attr-dict";
  let hasVerifier = 1;
}

#endif // HIR_COMM_TD
