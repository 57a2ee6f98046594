//! bson-rs-core: the byte-level BSON reader and writer behind bson-rs.
//!
//! Nothing in this crate touches Node-API, so `cargo test` and `cargo fuzz`
//! reach all of it. The reader turns BSON bytes into a decode tape, the
//! writer turns an encode tape into BSON bytes (formats in ARCHITECTURE.md).

pub mod decode;
pub mod encode;
pub mod keys;
pub mod shapes;
pub mod utf8;
