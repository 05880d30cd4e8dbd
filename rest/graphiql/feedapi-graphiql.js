// The feedapi GraphiQL page: ask for the key first, check it, then start
// GraphiQL with the key in its fetcher's headers, so that the schema for the
// Docs pane loads at once, and in the connection_init of its websocket, so
// that subscriptions run over graphql-transport-ws (a browser's websocket
// cannot carry the Authorization header). The key lives only in this
// closure: it is never written to localStorage (GraphiQL's
// shouldPersistHeaders stays false and the headers editor starts empty).
(function () {
  "use strict";
  var url = window.location.pathname;
  var socketURL = (window.location.protocol === "https:" ? "wss://" : "ws://") + window.location.host + url;
  var form = document.getElementById("key-form");
  var input = document.getElementById("key");
  var errorLine = document.getElementById("key-error");
  var step = document.getElementById("key-step");
  var root = document.getElementById("graphiql");

  function messageOf(status, body) {
    if (body && body.error && body.error.message) return body.error.message + " (" + status + ")";
    if (body && body.errors && body.errors.length) return body.errors[0].message + " (" + status + ")";
    return "The server answered " + status + ".";
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var key = input.value.trim();
    var headers = { Authorization: "Bearer " + key };
    errorLine.textContent = "Checking the key…";
    fetch(url, {
      method: "POST",
      headers: Object.assign({ "Content-Type": "application/json", Accept: "application/json" }, headers),
      body: JSON.stringify({ query: "{ __typename }" })
    }).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (body) {
        if (!response.ok || (body && body.errors)) throw new Error(messageOf(response.status, body));
        input.value = "";
        errorLine.textContent = "";
        step.hidden = true;
        root.hidden = false;
        var fetcher = GraphiQL.createFetcher({
          url: url,
          headers: headers,
          subscriptionUrl: socketURL,
          wsConnectionParams: headers
        });
        ReactDOM.createRoot(root).render(React.createElement(GraphiQL, {
          fetcher: fetcher,
          shouldPersistHeaders: false,
          defaultQuery: "# Curated posts, newest first; Docs (top left) lists every type and field.\n" +
            "{\n  posts(first: 5) {\n    nodes { id source createdAt body }\n    pageInfo { hasNextPage endCursor }\n  }\n}\n"
        }));
      });
    }).catch(function (err) {
      errorLine.textContent = err.message;
    });
  });
})();
