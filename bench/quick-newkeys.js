const path = require('path');
const lib = require(path.resolve(process.argv[2]));
const bson = require(path.resolve(__dirname, '../node_modules/bson'));
const which = process.argv[3] || 'ds';
const doc = i => ({ ['key_' + i]: i, ['other_' + i]: 'v' + (i & 7), nested: { ['in_' + i]: true } });
const N = 100000;
const bytes = []; for (let i = 0; i < N; i++) bytes.push(bson.serialize(doc(i)));
const docs = []; for (let i = 0; i < N; i++) docs.push(doc(i + N));
let d1 = 0, d2 = 0, s1 = 0, t;
if (which.includes('d')) {
  t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) lib.deserialize(bytes[i]);
  d1 = Number(process.hrtime.bigint() - t) / N;
  t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) lib.deserialize(bytes[i]);
  d2 = Number(process.hrtime.bigint() - t) / N;
}
if (which.includes('s')) {
  t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) lib.serialize(docs[i]);
  s1 = Number(process.hrtime.bigint() - t) / N;
}
console.log(process.argv[2].padEnd(18), 'deser 1st', d1.toFixed(0), 'ns; 2nd', d2.toFixed(0), 'ns; serialize new keys', s1.toFixed(0), 'ns');
