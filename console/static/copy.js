// The copy buttons: shown only where this script runs, since a page works
// without it (the secret is on the page, to select and copy by hand).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button.copy").forEach(function (button) {
    var target = document.getElementById(button.dataset.copy);
    if (!target || !navigator.clipboard) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(target.textContent).then(function () {
        button.textContent = "Copied";
      }, function () {
        button.textContent = "Select and copy by hand";
      });
    });
  });
});
