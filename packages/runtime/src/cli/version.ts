/** The CLI's release version. */
export const RUNX_VERSION = "0.1.0";
