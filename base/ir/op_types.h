// Names of the op types and attributes that ged's own machinery gives
// meaning to. ONNX ops keep their ONNX names ("Conv", "Relu", ...).
#pragma once

#include <string_view>

namespace ge::ir {

// Structural ops.
inline constexpr std::string_view kData = "Data";            // graph input; attr kAttrIndex
inline constexpr std::string_view kNetOutput = "NetOutput";  // graph outputs, in input order
inline constexpr std::string_view kConst = "Const";          // attr kAttrValue (tensor)
inline constexpr std::string_view kFileConstant = "FileConstant";
inline constexpr std::string_view kVariable = "Variable";
inline constexpr std::string_view kNoOp = "NoOp";
inline constexpr std::string_view kIdentity = "Identity";
inline constexpr std::string_view kTransData = "TransData";
// Partitioning.
inline constexpr std::string_view kPartitionedCall = "PartitionedCall";
inline constexpr std::string_view kInnerData = "InnerData";  // attr kAttrParentIndex
inline constexpr std::string_view kInnerNetOutput = "InnerNetOutput";
inline constexpr std::string_view kPlaceHolder = "PlaceHolder";
inline constexpr std::string_view kEnd = "End";
// Control flow.
inline constexpr std::string_view kIf = "If";
inline constexpr std::string_view kCase = "Case";
inline constexpr std::string_view kWhile = "While";

// Attributes.
inline constexpr std::string_view kAttrIndex = "index";                // Data: graph input position
inline constexpr std::string_view kAttrParentIndex = "_parent_index";  // InnerData: parent input
inline constexpr std::string_view kAttrValue = "value";                // Const: the tensor
inline constexpr std::string_view kAttrOpDomain = "_onnx_domain";     // op schema domain ("" = default)
inline constexpr std::string_view kAttrEngine = "_ge_engine";          // user: force this engine
inline constexpr std::string_view kAttrEngineName = "_engine_name";    // the placer's choice
inline constexpr std::string_view kAttrHostExec = "_host_exec";
inline constexpr std::string_view kAttrForceUnknownShape = "_force_unknown_shape";
inline constexpr std::string_view kAttrIsUnknownShape = "_is_unknown_shape";
// Multi-batch graphs (compiler/passes/multi_batch_clone_pass.h): the root
// Data's shape as the user gives it (-1 for dynamic dims; its declared type
// is the max shape), and the Case whose branches keep their own input types.
inline constexpr std::string_view kAttrUserShape = "_user_shape";
inline constexpr std::string_view kAttrMultiBatchCase = "_multi_batch_case";
inline constexpr std::string_view kAttrStageLevel = "_stage_level";
inline constexpr std::string_view kAttrOpset = "_onnx_opset";  // opset the node was imported at

}  // namespace ge::ir
