/** The global Mongoose plug-in: `mongoose.plugin(require('bson-rs/mongoose'))`. */
declare function bsonRs(schema: object): void;
declare namespace bsonRs {
  /** Turns the plug-in on and installs into the driver of `mongoose` (default: the one resolvable from the cwd). */
  function install(mongoose?: object): void;
  /** Turns the plug-in off and restores js-bson in every driver it installed into. */
  function uninstall(): boolean;
  /** Whether bson-rs is installed into the driver of the given mongoose (instance or schema). */
  function isInstalled(mongoose: object): boolean;
}
export = bsonRs;
