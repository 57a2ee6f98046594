'use strict';
// The Mongoose workload shared by the end-to-end test and bench/driver.js.
// Deterministic: the same call gives the same documents (ids included).

/** Models on a connection: Author and Post (every common schema type). */
function defineModels(mongoose, connection) {
  const { Schema } = mongoose;
  const authorSchema = new Schema({ name: String, born: Date, email: String }, { autoIndex: false });
  const commentSchema = new Schema({ by: String, at: Date, votes: Number, flagged: Boolean });
  const postSchema = new Schema(
    {
      seq: { type: Number, index: true },
      title: String,
      views: Number,
      published: Date,
      active: Boolean,
      author: { type: Schema.Types.ObjectId, ref: 'Author' },
      related: [{ type: Schema.Types.ObjectId, ref: 'Post' }],
      price: Schema.Types.Decimal128,
      blob: Buffer,
      tags: { type: Map, of: String },
      meta: {
        source: String,
        rank: { score: Number, tier: String },
        checked: Date
      },
      comments: [commentSchema]
    },
    { autoIndex: false }
  );
  return {
    Author: connection.model('Author', authorSchema),
    Post: connection.model('Post', postSchema)
  };
}

function oidHex(kind, i) {
  // 12 bytes: 4-byte time, kind byte, 7-byte counter.
  return '65a1b2c3' + kind.toString(16).padStart(2, '0') + i.toString(16).padStart(14, '0');
}

function authors(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    out.push({
      _id: oidHex(1, i),
      name: `Author ${i} ${'ÄÖü'.slice(0, i % 4)}`,
      born: new Date(Date.UTC(1950 + (i % 50), i % 12, 1 + (i % 28))),
      email: `author${i}@example.com`
    });
  }
  return out;
}

function posts(count, authorCount, mongo) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const comments = [];
    for (let c = 0; c < i % 4; c++) {
      comments.push({
        _id: oidHex(3, i * 4 + c),
        by: `user${(i + c) % 97}`,
        at: new Date(1700000000000 + i * 60000 + c * 1000),
        votes: (i * 7 + c) % 23 - 5,
        flagged: (i + c) % 5 === 0
      });
    }
    out.push({
      _id: oidHex(2, i),
      seq: i,
      title: `Post number ${i}: ${'lorem ipsum dolor sit amet '.repeat(1 + (i % 3))}✓`,
      views: i % 10 === 0 ? i * 1.5 : i * 13,
      published: new Date(1600000000000 + i * 3600000),
      active: i % 3 !== 0,
      author: oidHex(1, i % authorCount),
      related: [oidHex(2, (i + 1) % count), oidHex(2, (i + 7) % count)].slice(0, i % 3),
      price: mongo.Decimal128.fromString(`${i}.${String(i % 100).padStart(2, '0')}`),
      blob: Buffer.from([i & 0xff, (i >> 8) & 0xff, 0, 255, 7]),
      tags: { lang: i % 2 ? 'en' : 'es', tier: `t${i % 5}` },
      meta: { source: i % 2 ? 'import' : 'web', rank: { score: (i % 17) / 4, tier: `r${i % 3}` }, checked: new Date(1650000000000 + i) },
      comments
    });
  }
  return out;
}

module.exports = { defineModels, authors, posts, oidHex };
