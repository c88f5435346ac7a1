// A mesh with no device.
fusion.mesh @tp = []
