'use strict';
// A simulated future bson copy for the refusal tests (test/versions.test.js).

/**
 * A copy whose ObjectId passes the layout probe (it keeps i0..i3 when built from
 * bytes, and its serializeInto writes them) but whose other instances hold their
 * bytes elsewhere: bson-rs's i0..i3 fast path would write zeros for them.
 */
function copyWithUnknownObjectIdLayout(base) {
  class ObjectId extends base.ObjectId {
    constructor(id, offset) {
      super(id, offset);
      if (id instanceof Uint8Array) {
        const b = this.id;
        this.i0 = (b[0] << 16) | (b[1] << 8) | b[2];
        this.i1 = (b[3] << 16) | (b[4] << 8) | b[5];
        this.i2 = (b[6] << 16) | (b[7] << 8) | b[8];
        this.i3 = (b[9] << 16) | (b[10] << 8) | b[11];
      }
    }
    serializeInto(u8, index) {
      if (typeof this.i0 !== 'number') return super.serializeInto(u8, index);
      const ints = [this.i0, this.i1, this.i2, this.i3];
      for (let k = 0; k < 4; k++) {
        u8[index + 3 * k] = (ints[k] >>> 16) & 0xff;
        u8[index + 3 * k + 1] = (ints[k] >>> 8) & 0xff;
        u8[index + 3 * k + 2] = ints[k] & 0xff;
      }
      return 12;
    }
  }
  return { ...base, ObjectId };
}

module.exports = { copyWithUnknownObjectIdLayout };
