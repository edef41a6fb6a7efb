/** The kernel's own version. Plugins declare a semver range of kernels they work with. */
export const KERNEL_VERSION = '1.0.0';
