// ESM entry: built over js-bson's ESM build, so its classes match `import ... from 'bson'`.
import * as bson from 'bson';
import codecModule from './lib/codec.js';

export * from 'bson';

const codec = codecModule.createCodec(bson);
export const {
  serialize,
  serializeWithBufferAndIndex,
  deserialize,
  deserializeStream,
  calculateObjectSize,
  setInternalBufferSize
} = codec;

const api = Object.create(null);
for (const name of Object.keys(bson)) {
  if (name !== 'BSON') api[name] = Object.prototype.hasOwnProperty.call(codec, name) ? codec[name] : bson[name];
}
export const BSON = Object.freeze(api);
