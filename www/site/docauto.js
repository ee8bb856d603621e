// `docauto` as the site's examples import it: the package's browser entry, with `DocAuto` made with
// `dangerouslyAllowBrowser: true` unless the example says otherwise. The examples are written for servers; in the
// site, the key they use is the key of the emulator running in the page, so there is nothing to keep secret.
import { DocAuto as PackageDocAuto } from "../pkg/index.js";

export * from "../pkg/index.js";

export function DocAuto(options) {
  if (!new.target) throw new TypeError("Class constructor DocAuto cannot be invoked without 'new'");
  return new PackageDocAuto({ dangerouslyAllowBrowser: true, ...options });
}
DocAuto.prototype = PackageDocAuto.prototype;
Object.setPrototypeOf(DocAuto, PackageDocAuto);
