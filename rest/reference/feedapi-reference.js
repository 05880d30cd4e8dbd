// The feedapi API reference: Redoc renders the OpenAPI document this server
// serves, named by the page (data-document). The page needs no key and
// sends none: Redoc only reads the document. body[data-reference] says
// when it is done ("ready") or failed ("error"), for people and for tests.
(function () {
  "use strict";

  var root = document.getElementById("reference");
  var status = document.getElementById("reference-status");

  Redoc.init(root.getAttribute("data-document"), {
    // The paths, not only the operation names, in the middle column.
    pathInMiddlePanel: true,
    expandResponses: "200",
    requiredPropsFirst: true,
    sortEnumValuesAlphabetically: false,
    theme: { typography: { fontFamily: "system-ui, sans-serif", headings: { fontFamily: "system-ui, sans-serif" } } }
  }, root, function (err) {
    if (err) {
      status.textContent = "The API reference could not be rendered: " + (err.message || err);
      document.body.setAttribute("data-reference", "error");
      return;
    }
    status.hidden = true;
    document.body.setAttribute("data-reference", "ready");
  });
})();
