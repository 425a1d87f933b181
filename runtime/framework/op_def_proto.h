// The runtime's op registrations as TensorFlow's OpDef/OpList messages
// (runtime/proto/op_def.proto), for callers outside the runtime that list
// the ops: TF_GetAllOpList and, through it, the Python op-coverage test.
#ifndef TENSORWEAVE_FRAMEWORK_OP_DEF_PROTO_H_
#define TENSORWEAVE_FRAMEWORK_OP_DEF_PROTO_H_

#include "runtime/framework/op_def.h"
#include "tensorweave/proto/op_def.pb.h"

namespace tensorweave {

// `op_def` as a message. The shape function has no message form and is left
// out; the doc line becomes the summary.
proto::OpDef OpDefToProto(const OpDef& op_def);

// The runtime's form of an OpDef message (a FunctionDef's signature): the
// shape function gives unknown shapes. INVALID_ARGUMENT naming the op when
// an arg is not typed in exactly one of the ways ArgDef allows, names an
// attr the message lacks or of the wrong kind, or an attr's type is not one
// the runtime knows.
Status OpDefFromProto(const proto::OpDef& message, OpDef* op_def);

// Every op of `registry`, ordered by name.
proto::OpList OpListFromRegistry(const OpRegistry& registry);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_OP_DEF_PROTO_H_
