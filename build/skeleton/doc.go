// Package skeleton makes the skeletons of Windows base layers (each
// layer's tar with its entries kept and its files emptied, Maker), prunes
// them to the paths a stage writes (Prune), and keeps them in two caches:
// a directory on the machine (CacheDir) and a registry repository, one
// OCI artifact per base layer, checked against the Windows layout before
// use (RegistryCache). It knows nothing of solves or placeholders' images:
// package graft builds the placeholder from its layers.
package skeleton
