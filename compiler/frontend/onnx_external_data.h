// ONNX external data: the importer's names for base/io/external_data.h,
// where the resolution and confinement rules live (the runtime's
// FileConstant loader uses them too).
#pragma once

#include "base/io/external_data.h"

namespace ge::frontend {

using io::CheckExternalData;
using io::ExternalDataRef;
using io::ExternalDataRefFromOpDesc;
using io::kAttrDtype;
using io::kAttrLength;
using io::kAttrLocation;
using io::kAttrModelDir;
using io::kAttrOffset;
using io::kAttrShape;
using io::LoadExternalTensor;
using io::ResolveExternalDataPath;
using io::SetExternalDataAttrs;

}  // namespace ge::frontend
