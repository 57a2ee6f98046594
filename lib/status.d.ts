/** bson-rs/native: whether the Rust codec is in use (otherwise bson-rs runs js-bson's own codec functions). */
/** True when the native addon loaded. */
export declare const loaded: boolean;
/** The path of the loaded `.node` file, or null. */
export declare const binary: string | null;
/** Why no native codec is in use, and what to do about it; null when `loaded`. */
export declare const reason: string | null;
