export const DEFAULT_LIMITS = {
    maxBodyBytes: 64 * 1024,
    maxDataFields: 100,
    maxDataKeyLength: 128,
    maxDataDepth: 4,
};
