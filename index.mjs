// ESM entry: built over js-bson's ESM build, so its classes match `import ... from 'bson'`.
import * as bson from 'bson';
import codecModule from './lib/codec.js';

export * from 'bson';

const codec = codecModule.createCodec(bson);
export const BSON = codecModule.bsonNamespace(bson, codec);
export const {
  serialize,
  serializeWithBufferAndIndex,
  deserialize,
  deserializeStream,
  calculateObjectSize,
  setInternalBufferSize
} = codec;
