// citefind's speed-ups for citeproc-js 1.4.63 on goja (citefind's own code,
// not citeproc-js's). Each replaces one function of citeproc-js with one
// that returns the same result by a path goja runs faster; none changes
// what citeproc-js renders. They are installed only on the exact
// citeproc_commonjs.js they were written for (its sha256 is checked in
// Go), after the file has run and before any engine is built. The CSL test
// suite runs unpatched citeproc-js beside the patched engine and fails on
// any fixture where the two differ.
(function (CSL) {
  var installed = [];

  // setDecorations runs for every node of a style while the engine is
  // built. It walks the 8-element CSL.FORMAT_KEY_SEQUENCE with for-in,
  // which on goja enumerates the array's keys (and its prototype chain's)
  // as strings on every call: half of APA's engine build. An index loop
  // visits the same keys in the same order.
  CSL.setDecorations = function (state, attributes) {
    var ret = [], seq = CSL.FORMAT_KEY_SEQUENCE;
    for (var i = 0; i < seq.length; i += 1) {
      var key = seq[i];
      if (attributes[key]) {
        ret.push([key, attributes[key]]);
        delete attributes[key];
      }
    }
    return ret;
  };
  installed.push("setDecorations");

  // Every expansion of a macro looks the macro up with
  // getNodesByName(style, "macro", name): a walk of the whole style tree,
  // thousands of times for APA. The first such call indexes the style's
  // macro nodes by name (in the walk's own order); later calls answer from
  // the index. Every XmlJSON method that changes a tree invalidates every
  // index (whichever XmlJSON it is called on), and no other code of
  // citeproc-js changes a style tree.
  var proto = CSL.XmlJSON.prototype;
  var index = new WeakMap(); // XmlJSON → {root, gen, byName}
  var gen = 0; // bumped by every tree change, through any XmlJSON
  // collect is citeproc-js's own getNodesByName, calling itself.
  function collect(myjson, name, nameattrval, ret) {
    if (!ret) {
      ret = [];
    }
    if (!myjson || !myjson.children) {
      return ret;
    }
    if (name === myjson.name) {
      if (nameattrval) {
        if (nameattrval === myjson.attrs.name) {
          ret.push(myjson);
        }
      } else {
        ret.push(myjson);
      }
    }
    for (var i = 0, ilen = myjson.children.length; i < ilen; i += 1) {
      if ("object" !== typeof myjson.children[i]) {
        continue;
      }
      collect(myjson.children[i], name, nameattrval, ret);
    }
    return ret;
  }
  proto.getNodesByName = function (myjson, name, nameattrval, ret) {
    if (ret || name !== "macro" || !nameattrval || !myjson || myjson !== this.dataObj) {
      return collect(myjson, name, nameattrval, ret);
    }
    var ix = index.get(this);
    if (!ix || ix.root !== myjson || ix.gen !== gen) {
      var all = collect(myjson, "macro");
      ix = {root: myjson, gen: gen, byName: new Map()};
      for (var i = 0; i < all.length; i += 1) {
        var n = all[i].attrs.name;
        var list = ix.byName.get(n);
        if (!list) {
          list = [];
          ix.byName.set(n, list);
        }
        list.push(all[i]);
      }
      index.set(this, ix);
    }
    var found = ix.byName.get(nameattrval);
    return found ? found.slice() : [];
  };
  var mutators = ["setAttributeOnNodeIdentifiedByNameAttribute", "deleteNodeByNameAttribute",
    "deleteAttribute", "setAttribute", "insertChildNodeAfter", "insertPublisherAndPlace",
    "addMissingNameNodes", "addInstitutionNodes", "flagDateMacros", "clean", "makeXml"];
  mutators.forEach(function (m) {
    var orig = proto[m];
    if (typeof orig !== "function") {
      throw new Error("citefind speed-ups: CSL.XmlJSON.prototype." + m + " is missing");
    }
    proto[m] = function () {
      gen += 1;
      return orig.apply(this, arguments);
    };
  });
  installed.push("getNodesByName(macro)");

  // FlipFlopper.processTags, run on every string citeproc-js renders,
  // builds the same regular expression (a letter, a right single quote, a
  // letter; global) with new RegExp on every call, and goja compiles the
  // pattern each time: nearly 2,000 compilations for a 20-item Chicago
  // document. The constructor is rebuilt from its own source with that
  // expression compiled once and shared: String.prototype.replace starts a
  // global expression at lastIndex 0 and leaves it at 0, so every call
  // sees it as new. The source is the pinned file's, checked here: the
  // expression must occur exactly once.
  var ffSrc = CSL.Util.FlipFlopper.toString();
  var rexSrc = 'new RegExp("(" + CSL.ROMANESQUE_REGEXP.source + ")\\u2019(" + CSL.ROMANESQUE_REGEXP.source + ")", "g")';
  var at = ffSrc.indexOf(rexSrc);
  if (at < 0 || ffSrc.indexOf(rexSrc, at + 1) >= 0) {
    throw new Error("citefind speed-ups: CSL.Util.FlipFlopper is not the expected source");
  }
  var apostropheRex = new RegExp("(" + CSL.ROMANESQUE_REGEXP.source + ")\u2019(" + CSL.ROMANESQUE_REGEXP.source + ")", "g");
  // Indirect eval: the new constructor sees the globals the original saw
  // (citeproc_commonjs.js runs as a script, so CSL is one).
  CSL.Util.FlipFlopper = (0, eval)("(function (citefindApostropheRex) { return (" +
    ffSrc.slice(0, at) + "citefindApostropheRex" + ffSrc.slice(at + rexSrc.length) + "); })")(apostropheRex);
  installed.push("FlipFlopper(apostrophe expression)");

  return installed;
})
