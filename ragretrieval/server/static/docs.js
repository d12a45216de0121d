// Swagger UI on /docs, served from this machine; requests it sends carry the same-origin token.
const token = document.querySelector('meta[name="csrf-token"]').content;
window.SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  requestInterceptor: (request) => {
    request.headers["X-CSRF-Token"] = token;
    return request;
  },
});
