// bson-rs exposes exactly js-bson's API (the codec functions run in Rust),
// so its types are js-bson's own.
export * from 'bson';
